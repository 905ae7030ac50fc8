"""Progress reporting without a dependency on any display: stages report, the CLI listens.

Pure functions never report; the stages' mappers (as each batch comes back) and stage steps do, and the CLI
installs a listener: progress bars on a terminal, `LineProgress` lines in a log file. With no
listener, reports go nowhere.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Listener = Callable[[str, int, int | None], None]
_listeners: list[Listener] = []
_lock = threading.Lock()


def report(step: str, advance: int, total: int | None = None) -> None:
    """Say that `advance` more units of `step` are done (out of `total`, when known)."""
    with _lock:
        listeners = list(_listeners)
    for listener in listeners:
        listener(step, advance, total)


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Send progress reports to `listener` while the block runs."""
    with _lock:
        _listeners.append(listener)
    try:
        yield
    finally:
        with _lock:
            _listeners.remove(listener)


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class LineProgress:
    """Progress as plain lines, for where there is no terminal (CI, a scheduled job's log): a
    step's first report, then at most one line per step every `interval` seconds, and its last
    when it completes: `step: done of total (share), rate, time left`."""

    def __init__(
        self,
        write: Callable[[str], None],
        interval: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.write = write
        self.interval = interval
        self.clock = clock
        self._lock = threading.Lock()
        self._steps: dict[str, list[float]] = {}  # step -> [done, started, last line at]

    def __call__(self, step: str, advance: int, total: int | None) -> None:
        now = self.clock()
        with self._lock:
            state = self._steps.setdefault(step, [0.0, now, -float("inf")])
            state[0] += advance
            done, started, last = state
            finished = total is not None and done >= total
            if not finished and now - last < self.interval:
                return
            state[2] = now
        elapsed = max(now - started, 1e-9)
        rate = done / elapsed
        line = f"{step}: {int(done)}" + (f" of {total} ({done / total:.0%})" if total else "")
        line += f", {rate:.1f}/s" if now > started else ""
        if finished:
            line += f", done in {_duration(elapsed)}"
        elif total and rate > 0 and now > started:
            line += f", about {_duration((total - done) / rate)} left"
        self.write(line)
