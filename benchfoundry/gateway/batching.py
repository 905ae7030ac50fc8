"""Micro-batching for local models: calls that arrive together (the gateway runs many in
parallel) are gathered for a moment and run as one padded batch, which on a CPU or GPU costs far
less than running them one by one. Each caller still gets its own result or exception."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class _Entry(Generic[T]):
    item: T
    done: threading.Event = field(default_factory=threading.Event)
    result: Any = None
    error: BaseException | None = None


class MicroBatcher(Generic[T, R]):
    """Runs `run_batch(key, items)` over calls with the same key, `max_batch` at a time.

    A caller waits at most `wait_s` for company before its batch starts; batches run one at a
    time (a local model runs one forward pass at a time anyway)."""

    def __init__(
        self,
        run_batch: Callable[[Hashable, Sequence[T]], Sequence[R]],
        max_batch: int = 16,
        wait_s: float = 0.02,
    ) -> None:
        self.run_batch = run_batch
        self.max_batch = max_batch
        self.wait_s = wait_s
        self._pending: dict[Hashable, list[_Entry[T]]] = {}
        self._cond = threading.Condition()
        self._running = threading.Lock()
        self.batches: list[int] = []  # sizes of the batches run, for measurement

    def submit(self, key: Hashable, item: T) -> R:
        entry: _Entry[T] = _Entry(item)
        with self._cond:
            self._pending.setdefault(key, []).append(entry)
            self._cond.notify_all()
        while not entry.done.is_set():
            # Whoever gets the lock runs the next batch for everyone; the others wait for their
            # own result, and return as soon as it is there.
            if not self._running.acquire(blocking=False):
                entry.done.wait(self.wait_s)
                continue
            try:
                if not entry.done.is_set():
                    self._gather(key)
                    batch = self._take(key)
                    if batch:
                        self._run(key, batch)
            finally:
                self._running.release()
        if entry.error is not None:
            raise entry.error
        return entry.result

    def _gather(self, key: Hashable) -> None:
        with self._cond:
            if len(self._pending.get(key, [])) < self.max_batch:
                self._cond.wait_for(
                    lambda: len(self._pending.get(key, [])) >= self.max_batch, self.wait_s
                )

    def _take(self, key: Hashable) -> list[_Entry[T]]:
        with self._cond:
            queue = self._pending.get(key, [])
            batch, self._pending[key] = queue[: self.max_batch], queue[self.max_batch :]
            return batch

    def _run(self, key: Hashable, batch: list[_Entry[T]]) -> None:
        self.batches.append(len(batch))
        try:
            results = self.run_batch(key, [e.item for e in batch])
            if len(results) != len(batch):
                raise RuntimeError(f"a batch of {len(batch)} returned {len(results)} results")
        except BaseException as exc:  # every caller of the batch gets the failure
            for e in batch:
                e.error = exc
                e.done.set()
            return
        for e, result in zip(batch, results, strict=True):
            e.result = result
            e.done.set()
