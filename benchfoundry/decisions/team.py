"""Who reviews a run: its users (a role each, a token shown once of which only the SHA-256 is
kept, compared in constant time) and which user each batch is assigned to. Part of the run's
review database (`decisions/store.py`), which the team's methods write through."""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from benchfoundry.decisions.database import StoreError, _now, assignments, token_hash, users
from benchfoundry.storage.tables import RunFolder

ROLES = ("annotator", "adjudicator", "admin")
Role = Literal["annotator", "adjudicator", "admin"]


@dataclass(frozen=True)
class User:
    name: str
    role: str
    created_at: str
    created_by: str | None = None
    revoked_at: str | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


class ReviewTeam:
    """The users and batch assignments of a review database (mixed into `ReviewStore`, which
    gives the run, the engine and write transactions)."""

    run: RunFolder
    engine: Engine
    writing: Callable[[], Any]  # the store's write transaction (`ReviewStore.writing`)

    # --- users ----------------------------------------------------------------------------

    def add_user(
        self, name: str, role: str, created_by: str | None = None, token: str | None = None
    ) -> str:
        """Add a user and return their token (shown once; only its hash is kept): a new random
        one, or `token` when the caller chose it (at least 24 characters). A revoked name may be
        added again, with a new token."""
        if token is not None and len(token) < 24:
            raise StoreError("a chosen token has at least 24 characters")
        if role not in ROLES:
            raise StoreError(f"role '{role}' is not one of {', '.join(ROLES)}")
        if (
            not name
            or name == "auto"
            or not name.replace("-", "")
            .replace("_", "")
            .replace(".", "")
            .replace("@", "")
            .isalnum()
        ):
            raise StoreError(
                f"'{name}' cannot be a user name: letters, digits and . _ - @ only, not 'auto'"
            )
        token = token or secrets.token_urlsafe(32)
        with self.writing() as connection:
            before = connection.execute(sa.select(users).where(users.c.name == name)).first()
            if before is not None and before.revoked_at is None:
                raise StoreError(f"user '{name}' exists; revoke them first to issue a new token")
            if before is not None:
                connection.execute(users.delete().where(users.c.name == name))
            connection.execute(
                users.insert().values(
                    name=name,
                    role=role,
                    token_sha256=token_hash(token),
                    created_at=_now(),
                    created_by=created_by,
                    revoked_at=None,
                )
            )
        return token

    def users(self) -> list[User]:
        with self.engine.connect() as connection:
            rows = connection.execute(sa.select(users).order_by(users.c.name))
            return [User(r.name, r.role, r.created_at, r.created_by, r.revoked_at) for r in rows]

    def user(self, name: str) -> User | None:
        return next((u for u in self.users() if u.name == name), None)

    def revoke(self, name: str) -> User:
        with self.writing() as connection:
            row = connection.execute(sa.select(users).where(users.c.name == name)).first()
            if row is None:
                raise StoreError(f"no user '{name}'")
            if row.revoked_at is None:
                connection.execute(
                    users.update().where(users.c.name == name).values(revoked_at=_now())
                )
        found = self.user(name)
        assert found is not None
        return found

    def authenticate(self, token: str) -> User | None:
        """The active user whose token this is, or None (unknown or revoked)."""
        if not token:
            return None
        wanted = token_hash(token)
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(users).where(users.c.token_sha256 == wanted)).first()
        if row is None or not hmac.compare_digest(row.token_sha256, wanted):
            return None
        if row.revoked_at is not None:
            return None
        return User(row.name, row.role, row.created_at, row.created_by, row.revoked_at)

    # --- batch assignments ----------------------------------------------------------------

    def assign(self, batch_id: str, user_name: str, assigned_by: str | None = None) -> None:
        """Give a batch of the run to an active user."""
        from benchfoundry.core.records import ReviewBatchRecord

        known = {b.batch_id for b in self.run.table(ReviewBatchRecord).records()}
        if batch_id not in known:
            raise StoreError(f"no batch {batch_id}; 'benchfoundry review status' lists them")
        user = self.user(user_name)
        if user is None or not user.active:
            raise StoreError(
                f"no active user '{user_name}'; add them with 'benchfoundry review users add'"
            )
        with self.writing() as connection:
            connection.execute(assignments.delete().where(assignments.c.batch_id == batch_id))
            connection.execute(
                assignments.insert().values(
                    batch_id=batch_id,
                    user_name=user_name,
                    assigned_by=assigned_by,
                    assigned_at=_now(),
                )
            )

    def assignments(self) -> dict[str, str]:
        """batch_id -> the user it was assigned to (batches not listed keep their reviewer)."""
        with self.engine.connect() as connection:
            return {
                r.batch_id: r.user_name
                for r in connection.execute(
                    sa.select(assignments.c.batch_id, assignments.c.user_name)
                )
            }
