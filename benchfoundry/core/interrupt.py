"""Ctrl-C for long model work: the first SIGINT asks the work to stop, the second stops it at
once. Between the two, the gateway makes no new model call (a call asked for fails as
`interrupted`, see `REASON`), a stage keeps what it has and raises `Interrupted`, and the CLI
says how to resume and exits 130, as a shell expects of a command stopped by Ctrl-C."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from benchfoundry.core.errors import UserError

REASON = "interrupted"  # the failure kind of a call not made because of Ctrl-C
EXIT_CODE = 130  # 128 + SIGINT
_stop = threading.Event()


class Interrupted(UserError):
    """The work stopped because the user asked it to; what was done is kept."""

    exit_code = EXIT_CODE

    def __init__(self, where: str) -> None:
        super().__init__(
            f"interrupted: the answers so far are kept in {where}; run the same command again "
            "to resume (it asks only what has no answer yet)"
        )
        self.where = where


def requested() -> bool:
    """Whether Ctrl-C was pressed while `stopping_on_sigint` is in force."""
    return _stop.is_set()


def request() -> None:
    """Ask the work to stop (what the first Ctrl-C does)."""
    _stop.set()


@contextmanager
def stopping_on_sigint(notice: str) -> Iterator[None]:
    """While the block runs, the first Ctrl-C writes `notice` to stderr and asks the work to
    stop; a second raises KeyboardInterrupt at once. In the main thread only (signals are
    delivered there); elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def first(signum: int, frame: Any) -> None:
        sys.stderr.write(notice + "\n")
        sys.stderr.flush()
        _stop.set()
        signal.signal(signal.SIGINT, signal.default_int_handler)

    before = signal.signal(signal.SIGINT, first)
    _stop.clear()
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
        _stop.clear()
