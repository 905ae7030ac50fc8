"""Putting a release in place on a file system: one publish at a time per release name, the
hidden folders of publishes that died removed, and every file synced before the rename that
makes a version visible."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

TMP_PREFIX = ".tmp-"  # a release (or its clip cuts) being written: hidden until renamed


def clean_stale(folder: Path) -> None:
    """Remove the hidden folders of publishes that died (their process is gone)."""
    import psutil

    if not folder.is_dir():
        return
    for path in folder.glob(f"{TMP_PREFIX}*"):
        pid = path.name.rsplit("-", 1)[-1]
        if not pid.isdigit() or not psutil.pid_exists(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def fsync_tree(root: Path) -> None:
    for path in sorted(root.rglob("*"), reverse=True):
        if path.is_file():
            with path.open("rb") as handle:
                os.fsync(handle.fileno())
    for path in [*sorted(p for p in root.rglob("*") if p.is_dir()), root, root.parent]:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def locked(folder: Path) -> Iterator[None]:
    """One publish at a time per release name (on this file system)."""
    with open(folder / ".lock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
