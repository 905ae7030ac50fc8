"""Crash points: places where a process kills itself with SIGKILL when a test arms them, so crash
tests stop a writer at a chosen point instead of racing it.

Arm one by naming it in `BENCHFOUNDRY_CRASH_AT` in the environment of the process to kill.
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
}


def crash_point(name: str) -> None:
    """SIGKILL this process here if `name` is armed."""
    assert name in POINTS, f"unknown crash point {name}"
    if os.environ.get(ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
