"""Two run folders compared table by table: every row as canonical JSON, with the paths under
given roots made relative (two builds put the same inputs under different folders) and columns
that differ between builds by nature left out (when a row was made, the spec's hash).
`bench/compare_runs.py` prints it; the reliability and task-runner tests assert it."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

from benchfoundry.core.records import RECORDS_BY_TABLE
from benchfoundry.storage.tables import RunFolder

# Columns that differ between two builds of the same inputs by nature.
PER_BUILD = ("created_at", "decided_at", "lead_time_s", "spec_hash")


def _normalise(value: Any, roots: list[str]) -> Any:
    if isinstance(value, str):
        for root in roots:
            value = value.replace(root, "ROOT")
        return value
    if isinstance(value, dict):
        return {k: _normalise(v, roots) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normalise(v, roots) for v in value]
    return value


def table_rows(
    run: RunFolder,
    table: str,
    roots: Iterable[str | os.PathLike[str]] = (),
    ignore: Iterable[str] = (),
) -> list[str]:
    """The table's rows as sorted canonical JSON, `roots` replaced by ROOT, `ignore` left out."""
    prefixes = sorted((str(r) for r in roots), key=len, reverse=True)
    skipped = set(ignore)
    out = []
    for row in run.table_named(table).read().to_pylist():
        kept = {k: v for k, v in row.items() if k not in skipped}
        out.append(json.dumps(_normalise(kept, prefixes), sort_keys=True, default=repr))
    return sorted(out)


def run_tables(
    run: str | os.PathLike[str],
    roots: Iterable[str | os.PathLike[str]] = (),
    ignore: Iterable[str] = PER_BUILD,
) -> dict[str, list[str]]:
    """`table_rows` of every table the run folder has."""
    folder = RunFolder(run)
    roots = list(roots)
    return {
        name: table_rows(folder, name, roots, ignore)
        for name in RECORDS_BY_TABLE
        if folder.table_named(name).exists()
    }
