"""Compare two run folders table by table: rows, and rows that differ once paths are made
relative (two clones of the project put the same inputs under different folders).

    python bench/compare_runs.py RUN_A RUN_B [--root-a DIR --root-b DIR] [--ignore COL ...]

A folder of an earlier layout is upgraded when opened, so a run written before a schema change
compares with one written after it. Prints one line per table and exits 1 when any differs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchfoundry.core.records import RECORDS_BY_TABLE
from benchfoundry.devtools.compare import table_rows
from benchfoundry.storage.tables import RunFolder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--root-a", action="append", default=[], help="a path prefix in A's rows")
    parser.add_argument("--root-b", action="append", default=[], help="a path prefix in B's rows")
    parser.add_argument("--ignore", action="append", default=[], help="a column to leave out")
    args = parser.parse_args()
    a, b = RunFolder(args.a), RunFolder(args.b)
    differ = False
    for table in RECORDS_BY_TABLE:
        if not (a.table_named(table).exists() or b.table_named(table).exists()):
            continue
        ra = table_rows(a, table, args.root_a, args.ignore)
        rb = table_rows(b, table, args.root_b, args.ignore)
        same = ra == rb
        differ |= not same
        only_a = len(set(ra) - set(rb))
        only_b = len(set(rb) - set(ra))
        status = "identical" if same else f"DIFFER: {only_a} rows only in A, {only_b} only in B"
        print(f"{table:<14} A {len(ra):>6} rows, B {len(rb):>6} rows: {status}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
