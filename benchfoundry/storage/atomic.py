"""Atomic writes: a file is written in full under a temporary name, flushed, and renamed over
its target, so a reader sees the old file or the new one, never a part (the crash points let the
reliability tests kill a process between the two)."""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from benchfoundry.core.crash_points import crash_point


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def _atomic_target(path: Path) -> Iterator[BinaryIO]:
    """A file handle whose content becomes `path` only if the block finishes: written under a
    hidden temporary name, flushed to disk, then renamed into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".tmp-{uuid.uuid4().hex}-{path.name}"
    try:
        with open(tmp, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        crash_point("storage.before_rename")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(path.parent)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically."""
    with _atomic_target(path) as handle:
        handle.write(data)


def atomic_write_json(path: Path, value: Any) -> None:
    """Write `value` as indented JSON, atomically."""
    atomic_write_bytes(path, (json.dumps(value, indent=2, sort_keys=True) + "\n").encode("utf-8"))


def atomic_write_table(path: Path, table: pa.Table) -> None:
    """Write a Parquet file atomically."""
    with _atomic_target(path) as handle:
        pq.write_table(table, handle, compression="zstd")
