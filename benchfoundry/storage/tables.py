"""The run folder: one sub-folder per table, each holding immutable Parquet parts.

A write adds one part holding only the rows whose key is not stored yet, so appending the same
records twice changes nothing and a table never holds a key twice. Parts are written under a
hidden temporary name and renamed into place, so a reader never sees a partial file; readers
check every part's schema against the record's and name the offending column when it differs.
Tables of recomputed results (decisions, a model's latest answers) are replaced with `rewrite`,
which writes a journal first: a rewrite cut short leaves the old parts or the new one as the
table, never both, and the next writer finishes it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from benchfoundry.core.crash_points import crash_point
from benchfoundry.core.errors import UserError
from benchfoundry.core.ids import content_hash
from benchfoundry.core.records import RECORDS_BY_TABLE, Record, arrow_schema
from benchfoundry.storage.atomic import (
    atomic_write_json,
    atomic_write_table,
    fsync_dir,
)

R = TypeVar("R", bound=Record)
_CHECKED: set[Path] = set()  # table folders whose parts this process has checked for upgrades
_CHECKED_LOCK = threading.Lock()


class SchemaMismatchError(UserError, ValueError):
    """A stored table does not have the columns its record type expects."""


@dataclass(frozen=True)
class WriteResult:
    table: str
    added: int
    already_stored: int
    repeated_in_batch: int
    path: Path | None


def check_schema(found: pa.Schema, expected: pa.Schema, where: str) -> None:
    """Raise `SchemaMismatchError` naming the first expected column that is missing or differs."""
    for field in expected:
        index = found.get_field_index(field.name)
        if index < 0:
            raise SchemaMismatchError(f"{where}: column '{field.name}' is missing")
        found_type = found.field(index).type
        if not found_type.equals(field.type):
            raise SchemaMismatchError(
                f"{where}: column '{field.name}' has type {found_type}, expected {field.type}"
            )


def _check_nulls(rows: pa.Table | pa.RecordBatch, schema: pa.Schema, where: str) -> None:
    """Raise `SchemaMismatchError` naming the first non-nullable column that holds nulls."""
    for field in schema:
        if not field.nullable and rows.column(field.name).null_count:
            raise SchemaMismatchError(f"{where}: column '{field.name}' holds nulls, expected none")


class Table(Generic[R]):
    """One table of a run folder, typed by its record class."""

    def __init__(self, folder: Path, record_type: type[R]) -> None:
        self.record_type = record_type
        self.name = record_type.table
        self.path = folder / self.name
        self.schema = arrow_schema(record_type)
        self._held = threading.local()

    @property
    def _journal(self) -> Path:
        return self.path / ".rewrite.json"

    def _replaced(self) -> set[str]:
        """Parts that an interrupted rewrite had already replaced: its new part was written (or
        it left the table empty), so the old parts it names are no longer part of the table."""
        if not self._journal.exists():
            return set()
        journal = json.loads(self._journal.read_text(encoding="utf-8"))
        new = journal["new"]
        return set(journal["old"]) if new is None or (self.path / new).exists() else set()

    def parts(self) -> list[Path]:
        """The committed part files, in name order (temporary files are never listed)."""
        if not self.path.is_dir():
            return []
        replaced = self._replaced()
        return sorted(
            p for p in self.path.glob("part-*.parquet") if p.is_file() and p.name not in replaced
        )

    def _finish_rewrite(self) -> None:
        """Under the exclusive lock: complete or forget an interrupted rewrite."""
        if not self._journal.exists():
            return
        for name in self._replaced():
            (self.path / name).unlink(missing_ok=True)
        self._journal.unlink()
        fsync_dir(self.path)

    def exists(self) -> bool:
        return bool(self.parts())

    @contextlib.contextmanager
    def _lock(self, shared: bool = False) -> Iterator[None]:
        """The table's file lock: exclusive for writers, shared for readers (so that a reader
        never sees a rewrite half done). A writer's own reads take no second lock."""
        if getattr(self._held, "depth", 0):
            yield
            return
        if shared and not self.path.is_dir():
            yield
            return
        self.path.mkdir(parents=True, exist_ok=True)
        with open(self.path / ".lock", "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
            self._held.depth = 1
            try:
                if not shared:
                    self._finish_rewrite()
                yield
            finally:
                self._held.depth = 0
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _upgrade(self) -> None:
        """Once per process and table: parts in an earlier layout are upgraded in place
        (`benchfoundry.storage.migrations`)."""
        if not self.path.is_dir():
            return
        key = self.path.resolve()
        with _CHECKED_LOCK:
            if key in _CHECKED:
                return
        from benchfoundry.storage.migrations import upgrade_part

        with self._lock():
            for part in self.parts():
                try:
                    check_schema(pq.read_schema(part), self.schema, str(part))
                except SchemaMismatchError:
                    upgrade_part(self.name, part, self.schema)
        with _CHECKED_LOCK:
            _CHECKED.add(key)

    def read(self, columns: Sequence[str] | None = None) -> pa.Table:
        """All stored rows (optionally only some columns), schema-checked part by part."""
        self._upgrade()
        wanted = (
            self.schema if columns is None else pa.schema([self.schema.field(c) for c in columns])
        )
        with self._lock(shared=True):
            return self._read(wanted)

    def _read(self, wanted: pa.Schema) -> pa.Table:
        pieces = []
        for part in self.parts():
            where = f"table '{self.name}' part {part}"
            check_schema(pq.read_schema(part), wanted, where)
            piece = pq.read_table(part, columns=wanted.names)
            _check_nulls(piece, wanted, where)
            pieces.append(piece.cast(wanted))
        if not pieces:
            return wanted.empty_table()
        return pa.concat_tables(pieces)

    def batches(self, columns: Sequence[str], batch_size: int = 64) -> Iterator[pa.RecordBatch]:
        """The stored rows of some columns, a batch at a time (bounded memory for big columns
        such as image bytes), under the shared lock until the last batch is read."""
        self._upgrade()
        wanted = pa.schema([self.schema.field(c) for c in columns])
        with self._lock(shared=True):
            for part in self.parts():
                check_schema(pq.read_schema(part), wanted, f"table '{self.name}' part {part}")
                yield from pq.ParquetFile(part).iter_batches(
                    batch_size=batch_size, columns=wanted.names
                )

    def records(self) -> list[R]:
        """All stored rows as records."""
        return [self.record_type(**row) for row in self.read().to_pylist()]

    def key_set(self) -> set[tuple[Any, ...]]:
        """The key of every stored row."""
        return set(self._keys(self.read(columns=list(self.record_type.key))))

    def count(self) -> int:
        return sum(pq.read_metadata(part).num_rows for part in self.parts())

    def append(self, records: Iterable[R]) -> WriteResult:
        """Store the records whose key is new; return how many were added and skipped."""
        batch: dict[tuple[Any, ...], R] = {}
        repeated = 0
        for record in records:
            if not isinstance(record, self.record_type):
                raise TypeError(
                    f"table '{self.name}' takes {self.record_type.__name__}, got {type(record).__name__}"
                )
            key = record.key_values()
            if key in batch:
                repeated += 1
                continue
            batch[key] = record
        self._upgrade()
        with self._lock():
            stored = self.key_set() if batch else set()
            new_keys = sorted((k for k in batch if k not in stored), key=repr)
            already = len(batch) - len(new_keys)
            if not new_keys:
                return WriteResult(self.name, 0, already, repeated, None)
            rows = [batch[k].model_dump() for k in new_keys]
            table = pa.Table.from_pylist(rows, schema=self.schema)
            part = (
                self.path / f"part-{content_hash([list(k) for k in new_keys], length=20)}.parquet"
            )
            atomic_write_table(part, table)
        crash_point("table.after_write", self.name)
        return WriteResult(self.name, len(new_keys), already, repeated, part)

    def to_arrow(self, records: Iterable[R], chunk: int = 4096) -> pa.Table:
        """Records as rows of this table's schema, converted `chunk` at a time, so that only one
        chunk's dictionaries are alive at once (a stage's tens of thousands of answers would
        otherwise be held as records and as dictionaries together)."""
        pieces, rows = [], []
        for record in records:
            if not isinstance(record, self.record_type):
                raise TypeError(
                    f"table '{self.name}' takes {self.record_type.__name__}, got {type(record).__name__}"
                )
            rows.append(record.model_dump())
            if len(rows) >= chunk:
                pieces.append(pa.Table.from_pylist(rows, schema=self.schema))
                rows = []
        if rows or not pieces:
            pieces.append(pa.Table.from_pylist(rows, schema=self.schema))
        return pa.concat_tables(pieces)

    def _keys(self, table: pa.Table) -> list[tuple[Any, ...]]:
        columns = [table.column(name).to_pylist() for name in self.record_type.key]
        return list(zip(*columns, strict=True))

    def rewrite(
        self,
        records: Iterable[R] | pa.Table,
        drop: Callable[[dict[str, Any]], bool] | None = None,
    ) -> WriteResult:
        """Store `records` (or rows already converted by `to_arrow`), replacing stored rows with
        the same key and any stored row for which `drop(row)` is true; the table is written
        again as one part. For results that are recomputed (decisions, the latest answers of a
        model) rather than accumulated. Of new rows sharing a key, the last is kept."""
        new = records if isinstance(records, pa.Table) else self.to_arrow(records)
        check_schema(new.schema, self.schema, f"rows for table '{self.name}'")
        last = {key: i for i, key in enumerate(self._keys(new))}
        self._upgrade()
        with self._lock():
            old_parts = self.parts()
            kept = []
            for part in old_parts:  # stored rows, a batch at a time
                check_schema(pq.read_schema(part), self.schema, f"table '{self.name}' part {part}")
                stored = pq.ParquetFile(part)
                for batch in stored.iter_batches(batch_size=4096, columns=self.schema.names):
                    _check_nulls(batch, self.schema, f"table '{self.name}' part {part}")
                    rows = batch.to_pylist()
                    keep = [
                        i
                        for i, row in enumerate(rows)
                        if tuple(row[k] for k in self.record_type.key) not in last
                        and not (drop is not None and drop(row))
                    ]
                    if keep:
                        kept.append(pa.Table.from_batches([batch]).take(keep).cast(self.schema))
            n_kept = sum(t.num_rows for t in kept)
            order = sorted(last, key=repr)
            added = new.take([last[k] for k in order]) if order else new.slice(0, 0)
            table = pa.concat_tables([*kept, added.cast(self.schema)])
            keys = sorted(self._keys(table), key=repr)
            part = self.path / f"part-{content_hash([list(k) for k in keys], length=20)}.parquet"
            # A journal first, so that a crash at any point leaves either the old parts or the
            # new one as the table, never both: readers skip what it says was replaced.
            replaced = [p.name for p in old_parts if p != part]
            has_rows = table.num_rows > 0
            atomic_write_json(
                self._journal, {"new": part.name if has_rows else None, "old": replaced}
            )
            if has_rows:
                atomic_write_table(part, table)
            self._finish_rewrite()
        crash_point("table.after_write", self.name)
        return WriteResult(self.name, len(last), n_kept, 0, part if has_rows else None)


class RunFolder:
    """A run's folder: `RUN/<table>/part-*.parquet` per table and `RUN/manifest.json`."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def table(self, record_type: type[R]) -> Table[R]:
        return Table(self.root, record_type)

    def table_named(self, name: str) -> Table[Record]:
        try:
            return Table(self.root, RECORDS_BY_TABLE[name])
        except KeyError:
            raise KeyError(
                f"unknown table '{name}'; known: {', '.join(sorted(RECORDS_BY_TABLE))}"
            ) from None

    def counts(self) -> dict[str, int]:
        """Rows per stored table (tables not written yet are left out)."""
        return {
            name: self.table_named(name).count()
            for name in RECORDS_BY_TABLE
            if self.table_named(name).exists()
        }

    @property
    def manifest_path(self) -> Path:
        return self.root / "manifest.json"

    def read_manifest(self) -> dict[str, Any]:
        if not self.manifest_path.exists():
            return {}
        return json.loads(self.manifest_path.read_text(encoding="utf-8"))

    def update_manifest(self, section: str, value: Any) -> None:
        """Set one section of the manifest (the record of what ran, with which settings)."""
        manifest = self.read_manifest()
        manifest[section] = value
        atomic_write_json(self.manifest_path, manifest)
