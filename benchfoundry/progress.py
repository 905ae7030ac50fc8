"""Progress reporting without a dependency on any display: stages report, the CLI listens.

Pure functions never report; the thin Prefect task wrappers do, and the CLI installs a listener
that draws progress bars. With no listener, reports go nowhere.
"""

from __future__ import annotations

import threading
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
