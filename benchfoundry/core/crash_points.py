"""Crash points: places where a process kills itself with SIGKILL when a test arms them, so crash
tests stop a writer at a chosen point instead of racing it.

Arm one by naming it in `BENCHFOUNDRY_CRASH_AT` in the environment of the process to kill; a point
that takes a detail is armed for one case of it as `point:detail` (`table.after_write:reviews`
kills the process once the `reviews` table has stored a batch).
"""

from __future__ import annotations

import os
import signal

ENV = "BENCHFOUNDRY_CRASH_AT"
POINTS = {
    "storage.before_rename": "a file is written in full under its temporary name, not yet renamed",
    "publish.after_data": "a release's Parquet files are written in its hidden folder, nothing else",
    "publish.before_latest": "a release is renamed into place, `latest` not yet moved to it",
    "evaluate.after_batch": "an evaluation has stored one batch of a model's results",
    "table.after_write": "a table (the detail: its name) has stored a batch of rows",
    "review.before_commit": "a review decision is written in its transaction, not yet committed",
}


def crash_point(name: str, detail: str = "") -> None:
    """SIGKILL this process here if `name` (or `name:detail`) is armed."""
    assert name in POINTS, f"unknown crash point {name}"
    armed = os.environ.get(ENV)
    if armed is not None and (armed == name or armed == f"{name}:{detail}"):
        os.kill(os.getpid(), signal.SIGKILL)
