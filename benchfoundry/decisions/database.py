"""The review database's tables and connections: the SQLAlchemy tables (their history is the
alembic migrations under `decisions/migrations`), which database a run uses, one engine per URL
with SQLite's pragmas, and the schema upgrade."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from benchfoundry.core.errors import UserError
from benchfoundry.storage.tables import RunFolder

SQLITE_NAME = "reviews.sqlite"
ENV_URL = "BENCHFOUNDRY_REVIEW_DATABASE"


class StoreError(UserError, ValueError):
    """A database that cannot be opened or a request it cannot carry out; the message says
    why."""


metadata = sa.MetaData()

reviews = sa.Table(
    "reviews",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("question_id", sa.String, nullable=False),
    sa.Column("reviewer", sa.String, nullable=False),
    sa.Column("role", sa.String, nullable=True),
    sa.Column("decision", sa.String, nullable=False),
    sa.Column("new_answer", sa.String, nullable=True),
    sa.Column("new_question", sa.Text, nullable=True),
    sa.Column("new_options", sa.Text, nullable=True),  # a JSON list of texts
    sa.Column("new_dimension", sa.String, nullable=True),
    sa.Column("reason", sa.Text, nullable=True),
    sa.Column("note", sa.Text, nullable=True),
    sa.Column("tool", sa.String, nullable=False),
    sa.Column("batch_id", sa.String, nullable=True),
    sa.Column("candidate_hash", sa.String, nullable=False),
    sa.Column("decided_at", sa.String, nullable=False),  # ISO time to the nanosecond
    sa.Column("lead_time_s", sa.Float, nullable=True),
    sa.Column("adjudication", sa.Boolean, nullable=False, default=False),
    sa.Column("language", sa.String, nullable=True),  # a twin's (`<id>@<language>`); None: English
    sa.UniqueConstraint("question_id", "reviewer", "decided_at", name="uq_reviews_key"),
)
current = sa.Table(
    "current",
    metadata,
    sa.Column("question_id", sa.String, primary_key=True),
    sa.Column("reviewer", sa.String, primary_key=True),
    sa.Column("review_id", sa.Integer, nullable=False),
    sa.Column("decided_at", sa.String, nullable=False),
)
users = sa.Table(
    "users",
    metadata,
    sa.Column("name", sa.String, primary_key=True),
    sa.Column("role", sa.String, nullable=False),
    sa.Column("token_sha256", sa.String(64), nullable=False, unique=True),
    sa.Column("created_at", sa.String, nullable=False),
    sa.Column("created_by", sa.String, nullable=True),
    sa.Column("revoked_at", sa.String, nullable=True),
)
assignments = sa.Table(
    "assignments",
    metadata,
    sa.Column("batch_id", sa.String, primary_key=True),
    sa.Column("user_name", sa.String, nullable=False),
    sa.Column("assigned_by", sa.String, nullable=True),
    sa.Column("assigned_at", sa.String, nullable=False),
)
store_meta = sa.Table(
    "store_meta",
    metadata,
    sa.Column("key", sa.String, primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

_FIELDS = [c.name for c in reviews.columns if c.name not in ("id",)]


def _now() -> str:
    ns = time.time_ns()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ns // 10**9)) + f".{ns % 10**9:09d}Z"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def shown_url(url: str) -> str:
    """The URL with any password masked, for messages and manifests."""
    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return "<an unreadable database URL>"


def default_url(run_root: Path) -> str:
    return f"sqlite:///{(Path(run_root) / SQLITE_NAME).resolve()}"


def spec_url(run: RunFolder) -> str | None:
    """The database the run's build spec names (`options.review.database`), if any."""
    spec = run.read_manifest().get("build", {}).get("spec", {})
    value = ((spec.get("options") or {}).get("review") or {}).get("database")
    return str(value) if value else None


def resolve_url(run: RunFolder, url: str | None = None) -> str:
    """The database of a run: `url` if given, else $BENCHFOUNDRY_REVIEW_DATABASE, else the
    spec's `options.review.database`, else SQLite in the run folder."""
    return url or os.environ.get(ENV_URL) or spec_url(run) or default_url(run.root)


_ENGINES: dict[str, Engine] = {}
_LOCK = threading.Lock()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None  # transactions begin in `_sqlite_begin`
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at each checkpoint, never torn
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_begin(connection: Connection) -> None:
    """Writers take SQLite's write lock when they begin (BEGIN IMMEDIATE), so that two writers
    wait for each other (busy_timeout) instead of one failing when it upgrades a read."""
    immediate = connection.get_execution_options().get("immediate", False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def engine_for(url: str) -> Engine:
    """One engine per URL and process (a pool of connections)."""
    with _LOCK:
        engine = _ENGINES.get(url)
        if engine is not None:
            return engine
        try:
            parsed = sa.engine.make_url(url)
        except sa.exc.ArgumentError as exc:
            raise StoreError(f"'{shown_url(url)}' is not a database URL: {exc}") from None
        if parsed.get_backend_name() == "sqlite":
            if parsed.database:
                Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
            engine = sa.create_engine(url, connect_args={"timeout": 30})
            sa.event.listen(engine, "connect", _sqlite_pragmas)
            sa.event.listen(engine, "begin", _sqlite_begin)
        else:
            if parsed.get_backend_name() == "postgresql" and parsed.drivername == "postgresql":
                parsed = parsed.set(drivername="postgresql+psycopg")
            try:
                engine = sa.create_engine(parsed, pool_pre_ping=True, pool_size=10)
            except (ImportError, sa.exc.NoSuchModuleError) as exc:
                raise StoreError(
                    f"no driver for '{shown_url(url)}': {exc}; PostgreSQL goes through psycopg "
                    "(postgresql+psycopg://...)"
                ) from None
        _ENGINES[url] = engine
        return engine


# The newest revision under `migrations/versions` (a test holds it to alembic's own head): a
# database already there is not handed to alembic, whose import takes half a second of every
# command that opens the store.
HEAD = "0002"


def at_head(engine: Engine) -> bool:
    """Whether the database's schema is at `HEAD` (False where it has no alembic version)."""
    with engine.connect() as connection:
        if not sa.inspect(connection).has_table("alembic_version"):
            return False
        found = connection.execute(sa.text("SELECT version_num FROM alembic_version")).all()
    return [tuple(row) for row in found] == [(HEAD,)]


def alembic_config() -> Any:
    """alembic's configuration of the review database's migrations (no alembic.ini)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    return config


def migrate(engine: Engine) -> None:
    """Upgrade the schema to the newest alembic revision (nothing to do where it is there)."""
    if at_head(engine):
        return
    from alembic import command

    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
