"""A temporary PostgreSQL server on 127.0.0.1, for tests and benchmarks of the review database:
initdb in a temporary folder (as the `postgres` user when run as root, which PostgreSQL refuses
to be), started with pg_ctl on a free port, trust authentication on loopback only, stopped and
removed on exit. `fresh()` makes an empty database and returns its URL."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

BIN = Path(os.environ.get("BENCHFOUNDRY_POSTGRES_BIN", "/usr/lib/postgresql/15/bin"))


class PostgresMissing(RuntimeError):
    """PostgreSQL's programs are not on this machine."""


@dataclass
class TemporaryPostgres:
    port: int
    user: str = "bench"

    def fresh(self) -> str:
        """A new empty database on the server; its SQLAlchemy URL."""
        import sqlalchemy as sa

        name = f"reviews_{uuid.uuid4().hex[:12]}"
        admin = sa.create_engine(self.url("postgres"), isolation_level="AUTOCOMMIT")
        try:
            with admin.connect() as connection:
                connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
        finally:
            admin.dispose()
        return self.url(name)

    def url(self, name: str) -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{name}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def temporary_postgres() -> Iterator[TemporaryPostgres]:
    if not (BIN / "initdb").exists():
        raise PostgresMissing(f"PostgreSQL is not installed ({BIN}/initdb not found)")
    root = Path(tempfile.mkdtemp(prefix="benchfoundry-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        import pwd

        owner = pwd.getpwnam("postgres")
        os.chown(root, owner.pw_uid, owner.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data, port = root / "data", _free_port()
    server = TemporaryPostgres(port)
    subprocess.run(
        [*as_user, str(BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", server.user],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c max_connections=200"
    try:
        subprocess.run(
            [*as_user, str(BIN / "pg_ctl"), "-D", str(data), "-o", options,
             "-l", str(root / "server.log"), "-w", "start"],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        yield server
    finally:
        subprocess.run(
            [*as_user, str(BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True, timeout=60,
        )  # fmt: skip
        shutil.rmtree(root, ignore_errors=True)
