"""How a stage runs its batches: a mapper takes the batch function and its jobs and yields the
results in job order. `INLINE` runs them in turn in this process (a stage called as a plain
function, and tests); the pipeline's Prefect mapper runs each as a task on the flow's task
runner. Stages depend only on this protocol, never on Prefect."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

from benchfoundry.core import progress

Job = tuple[tuple[Any, ...], int]  # (arguments of the batch function, items it holds)


class Mapper(Protocol):
    """Runs a stage's batch function over its jobs and yields the results in job order."""

    def map(
        self,
        fn: Callable[..., Any],
        jobs: Iterable[Job],
        *,
        label: str,
        total: int | None = None,
        ahead: int = 2,
        retries: int = 0,
    ) -> Iterator[Any]: ...


class InlineMapper:
    """Each job in turn, in this process: a stage called as a plain function."""

    def map(self, fn, jobs, *, label, total=None, ahead=2, retries=0):  # noqa: ARG002
        for args, size in jobs:
            result = fn(*args)
            progress.report(label, size, total)
            yield result


INLINE = InlineMapper()


def windowed(
    submit: Callable[..., Any], jobs: Iterable[Job], label: str, total: int | None, ahead: int
) -> Iterator[Any]:
    """Each job through `submit` (which returns a future), at most `ahead` in flight, results
    in job order, progress reported as each comes back."""
    pending = iter(jobs)
    in_flight: deque = deque()
    while True:
        while len(in_flight) < max(1, ahead):
            job = next(pending, None)
            if job is None:
                break
            args, size = job
            in_flight.append((submit(*args), size))
        if not in_flight:
            return
        future, size = in_flight.popleft()
        result = future.result()
        progress.report(label, size, total)
        yield result
