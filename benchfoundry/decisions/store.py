"""Where review decisions, users and batch assignments live: a database, because many people
decide at once. SQLite (WAL) in the run folder by default (`RUN/reviews.sqlite`, nothing to
start); PostgreSQL (or any SQLAlchemy URL) for a team server, named by `--database` or the spec's
`options.review.database`. The schema is versioned with alembic (`decisions/migrations`) and
upgraded when a store opens.

Decisions are append-only, as in the `reviews` Parquet table: every decision is a new row and
the latest per reviewer counts. `current` keeps, per question and reviewer, the id of that
latest row, updated in the same transaction as the insert, so that progress and a page's
decisions are one indexed read however many decisions there are. The `reviews` Parquet table
stays the run folder's contract: `snapshot` writes it from the database, in one transaction.

A run folder whose decisions are Parquet parts only (written before the database) is migrated
on first open: every row is copied in, nothing lost, and the Parquet table is left as it was.

Tokens: a user's token is shown once, when the user is added; only its SHA-256 is stored (a
token is 32 random bytes, so a fast hash is enough), compared in constant time."""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from benchfoundry.core.crash_points import crash_point
from benchfoundry.core.records import ReviewRecord
from benchfoundry.decisions.database import (  # noqa: F401  StoreError and shown_url are the store's API
    _FIELDS,
    SQLITE_NAME,
    StoreError,
    current,
    default_url,
    engine_for,
    migrate,
    resolve_url,
    reviews,
    shown_url,
    store_meta,
)
from benchfoundry.decisions.team import ReviewTeam
from benchfoundry.storage.tables import RunFolder


def _row_to_record(row: Any) -> ReviewRecord:
    values = {name: getattr(row, name) for name in _FIELDS}
    if values["new_options"] is not None:
        values["new_options"] = json.loads(values["new_options"])
    values["adjudication"] = bool(values["adjudication"])
    return ReviewRecord.model_construct(**values)


def _record_to_row(record: ReviewRecord, role: str | None) -> dict[str, Any]:
    row = {name: getattr(record, name) for name in _FIELDS}
    if row["new_options"] is not None:
        row["new_options"] = json.dumps(list(row["new_options"]), ensure_ascii=False)
    row["role"] = role or record.role
    return row


def _rebuild_current(connection: Connection) -> None:
    """`current` from every stored decision: each reviewer's latest per question."""
    ranked = sa.select(
        reviews.c.question_id,
        reviews.c.reviewer,
        reviews.c.id.label("review_id"),
        reviews.c.decided_at,
        sa.func.row_number()
        .over(
            partition_by=(reviews.c.question_id, reviews.c.reviewer),
            order_by=(reviews.c.decided_at.desc(), reviews.c.id.desc()),
        )
        .label("rank"),
    ).subquery()
    connection.execute(current.delete())
    connection.execute(
        current.insert().from_select(
            ["question_id", "reviewer", "review_id", "decided_at"],
            sa.select(
                ranked.c.question_id, ranked.c.reviewer, ranked.c.review_id, ranked.c.decided_at
            ).where(ranked.c.rank == 1),
        )
    )


@functools.cache
def _upserts(dialect: str) -> tuple[Any, Any] | None:
    """(insert a decision unless stored, returning its id; upsert `current` forward) for the
    dialects that have ON CONFLICT, built once."""
    if dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert
    elif dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        return None
    add_review = (
        insert(reviews)
        .on_conflict_do_nothing(index_elements=["question_id", "reviewer", "decided_at"])
        .returning(reviews.c.id)
    )
    upsert = insert(current)
    move_current = upsert.on_conflict_do_update(
        index_elements=["question_id", "reviewer"],
        set_={"review_id": upsert.excluded.review_id, "decided_at": upsert.excluded.decided_at},
        where=current.c.decided_at <= upsert.excluded.decided_at,
    )
    return add_review, move_current


_MIGRATED: set[str] = set()  # run folder and database pairs opened in this process


class ReviewStore(ReviewTeam):
    """A run's review database. Open with `ReviewStore.open(run)`; cheap to open again (one
    engine per URL and process, the schema checked once)."""

    def __init__(self, run: RunFolder, url: str, engine: Engine) -> None:
        self.run = run
        self.url = url
        self.engine = engine

    @classmethod
    def open(cls, run: RunFolder | str | Path, url: str | None = None) -> ReviewStore:
        folder = run if isinstance(run, RunFolder) else RunFolder(run)
        resolved = resolve_url(folder, url)
        engine = engine_for(resolved)
        store = cls(folder, resolved, engine)
        key = f"{resolved}|{folder.root.resolve()}"
        if key not in _MIGRATED:
            try:
                migrate(engine)
            except sa.exc.OperationalError as exc:
                raise StoreError(
                    f"cannot open the review database {shown_url(resolved)}: {exc.orig}"
                ) from None
            store._import_parquet()
            _MIGRATED.add(key)
        return store

    @property
    def shown(self) -> str:
        return shown_url(self.url)

    @property
    def is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"

    # --- decisions ------------------------------------------------------------------------

    def _import_parquet(self) -> None:
        """Copy the run folder's Parquet decisions in, once per run folder and database (a
        PostgreSQL database may serve several runs: the marker names the folder)."""
        marker = f"parquet_imported:{self.run.root.resolve()}"
        with self.writing() as connection:
            done = connection.execute(
                sa.select(store_meta.c.value).where(store_meta.c.key == marker)
            ).first()
            if done is not None:
                return
            table = self.run.table(ReviewRecord)
            records = table.records() if table.exists() else []
            stored = {
                (r.question_id, r.reviewer, r.decided_at)
                for r in connection.execute(
                    sa.select(reviews.c.question_id, reviews.c.reviewer, reviews.c.decided_at)
                )
            }
            new = {(r.question_id, r.reviewer, r.decided_at): r for r in records}
            rows = [_record_to_row(r, None) for k, r in sorted(new.items()) if k not in stored]
            if rows:
                connection.execute(reviews.insert(), rows)
                _rebuild_current(connection)
            connection.execute(
                store_meta.insert().values(key=marker, value=json.dumps({"rows": len(rows)}))
            )

    def _insert(
        self, connection: Connection, rows: Sequence[tuple[ReviewRecord, str | None]]
    ) -> int:
        """Insert decisions that are not stored yet (same question, reviewer and time: the
        same decision) and move `current` on; the number inserted. Two statements a decision
        on SQLite and PostgreSQL (an insert that skips a stored decision, an upsert of
        `current` that never moves it back); other databases take the portable path."""
        statements = _upserts(self.engine.dialect.name)
        if statements is None:
            return self._insert_portable(connection, rows)
        add_review, move_current = statements
        added = 0
        for record, role in sorted(rows, key=lambda pair: pair[0].decided_at):
            review_id = connection.execute(add_review, _record_to_row(record, role)).scalar()
            if review_id is None:  # stored already
                continue
            added += 1
            connection.execute(
                move_current,
                {
                    "question_id": record.question_id,
                    "reviewer": record.reviewer,
                    "review_id": review_id,
                    "decided_at": record.decided_at,
                },
            )
        return added

    def _insert_portable(
        self, connection: Connection, rows: Sequence[tuple[ReviewRecord, str | None]]
    ) -> int:
        added = 0
        for record, role in sorted(rows, key=lambda pair: pair[0].decided_at):
            found = connection.execute(
                sa.select(reviews.c.id).where(
                    reviews.c.question_id == record.question_id,
                    reviews.c.reviewer == record.reviewer,
                    reviews.c.decided_at == record.decided_at,
                )
            ).first()
            if found is not None:
                continue
            review_id = connection.execute(
                reviews.insert().values(**_record_to_row(record, role))
            ).inserted_primary_key[0]
            added += 1
            before = connection.execute(
                sa.select(current.c.decided_at).where(
                    current.c.question_id == record.question_id,
                    current.c.reviewer == record.reviewer,
                )
            ).first()
            if before is None:
                connection.execute(
                    current.insert().values(
                        question_id=record.question_id,
                        reviewer=record.reviewer,
                        review_id=review_id,
                        decided_at=record.decided_at,
                    )
                )
            elif before.decided_at <= record.decided_at:
                connection.execute(
                    current.update()
                    .where(
                        current.c.question_id == record.question_id,
                        current.c.reviewer == record.reviewer,
                    )
                    .values(review_id=review_id, decided_at=record.decided_at)
                )
        return added

    def writing(self) -> Any:
        """A write transaction (SQLite: holding the write lock from its start)."""
        return self.engine.execution_options(immediate=True).begin()

    def add(self, records: Sequence[ReviewRecord], role: str | None = None) -> int:
        """Store decisions in one transaction (all or none); the number that were new. Two
        writers storing the same decision at once (PostgreSQL) settle it by a retry."""
        if not records:
            return 0
        for attempt in range(3):
            try:
                with self.writing() as connection:
                    added = self._insert(connection, [(r, role) for r in records])
                    crash_point("review.before_commit")
                return added
            except sa.exc.IntegrityError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def records(self, question_ids: Iterable[str] | None = None) -> list[ReviewRecord]:
        """Every stored decision (of some questions), oldest first."""
        query = sa.select(reviews).order_by(reviews.c.decided_at, reviews.c.id)
        if question_ids is not None:
            wanted = list(dict.fromkeys(question_ids))
            out: list[ReviewRecord] = []
            with self.engine.connect() as connection:
                for start in range(0, len(wanted), 500):
                    chunk = wanted[start : start + 500]
                    rows = connection.execute(query.where(reviews.c.question_id.in_(chunk)))
                    out += [_row_to_record(row) for row in rows]
            return sorted(out, key=lambda r: r.decided_at)
        with self.engine.connect() as connection:
            return [_row_to_record(row) for row in connection.execute(query)]

    def latest(
        self, question_ids: Iterable[str] | None = None
    ) -> dict[str, dict[str, ReviewRecord]]:
        """question_id -> reviewer -> their latest decision (of some questions, or all)."""
        query = sa.select(reviews).join(current, current.c.review_id == reviews.c.id)
        out: dict[str, dict[str, ReviewRecord]] = defaultdict(dict)
        with self.engine.connect() as connection:
            if question_ids is None:
                chunks: list[Any] = [query]
            else:
                wanted = list(dict.fromkeys(question_ids))
                chunks = [
                    query.where(current.c.question_id.in_(wanted[s : s + 500]))
                    for s in range(0, len(wanted), 500)
                ]
            for q in chunks:
                for row in connection.execute(q):
                    out[row.question_id][row.reviewer] = _row_to_record(row)
        return out

    def decided_pairs(self) -> set[tuple[str, str]]:
        """Every (question_id, reviewer) with a decision: progress in one read."""
        with self.engine.connect() as connection:
            return {
                (row.question_id, row.reviewer)
                for row in connection.execute(sa.select(current.c.question_id, current.c.reviewer))
            }

    def pairs_since(self, after: int) -> tuple[set[tuple[str, str]], int]:
        """The (question_id, reviewer) of decisions stored with an id above `after`, and the
        highest id seen (`after` when none): progress read from where it was left."""
        query = sa.select(reviews.c.id, reviews.c.question_id, reviews.c.reviewer).where(
            reviews.c.id > after
        )
        pairs, last = set(), after
        with self.engine.connect() as connection:
            for row in connection.execute(query):
                pairs.add((row.question_id, row.reviewer))
                last = max(last, row.id)
        return pairs, last

    def count(self) -> int:
        with self.engine.connect() as connection:
            return int(connection.execute(sa.select(sa.func.count()).select_from(reviews)).scalar())

    def snapshot(self) -> int:
        """Write the `reviews` Parquet table from the database: every decision, read in one
        transaction (a consistent snapshot); the number of rows. SQLite's write-ahead log is
        folded into the database file, so that the file alone is the database."""
        rows = self.records()
        table = self.run.table(ReviewRecord)
        table.rewrite(rows)
        if self.is_sqlite:
            with self.engine.connect() as connection:
                connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        return len(rows)


def snapshot_run(run: RunFolder, url: str | None = None) -> int | None:
    """Write the `reviews` Parquet table from the run's database before something reads it
    (publish, the build's report); None when the run has no database yet (never reviewed)."""
    resolved = resolve_url(run, url)
    if resolved == default_url(run.root) and not (run.root / SQLITE_NAME).exists():
        return None
    return ReviewStore.open(run, url).snapshot()
