"""`review users` and `review assign`: the review app's users (a token each, shown once) and who
reviews a batch."""

from __future__ import annotations

from typing import Annotated

import typer

from benchfoundry.cli.common import JsonOpt, OutOpt, VerboseOpt, emit, require_table, run
from benchfoundry.cli.review import DatabaseOpt, review_app

users_app = typer.Typer(
    no_args_is_help=True, help="The review app's users: annotators, adjudicators, admins."
)
review_app.add_typer(users_app, name="users")


@users_app.command("add")
def users_add(
    name: Annotated[str, typer.Argument(help="The user's name (their reviewer name).")],
    role: Annotated[
        str, typer.Option("--role", help="annotator, adjudicator or admin.")
    ] = "annotator",
    out: OutOpt = ...,  # type: ignore[assignment]
    database: DatabaseOpt = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Add a user and print their token once (only its hash is stored)."""

    def action() -> None:
        from benchfoundry.decisions.store import ReviewStore

        store = ReviewStore.open(out, database)
        token = store.add_user(name, role, created_by="cli")
        emit(
            as_json,
            {"name": name, "role": role, "token": token},
            f"user {name} ({role}); their token, shown only now:\n{token}",
        )

    run(verbose, action)


@users_app.command("list")
def users_list(
    out: OutOpt, database: DatabaseOpt = None, as_json: JsonOpt = False, verbose: VerboseOpt = False
) -> None:
    """The users, their roles and whether their token still works (never the token)."""

    def action() -> None:
        from dataclasses import asdict

        from benchfoundry.decisions.store import ReviewStore

        found = ReviewStore.open(out, database).users()
        lines = [
            f"{u.name}  {u.role}  added {u.created_at[:19]}"
            + (f"  revoked {u.revoked_at[:19]}" if u.revoked_at else "")
            for u in found
        ]
        emit(
            as_json,
            {"users": [{**asdict(u), "active": u.active} for u in found]},
            "\n".join(lines) or "no users yet: benchfoundry review users add NAME --role ROLE",
        )

    run(verbose, action)


@users_app.command("revoke")
def users_revoke(
    name: Annotated[str, typer.Argument()],
    out: OutOpt = ...,  # type: ignore[assignment]
    database: DatabaseOpt = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Revoke a user's token at once (their decisions stay)."""

    def action() -> None:
        from benchfoundry.decisions.store import ReviewStore

        user = ReviewStore.open(out, database).revoke(name)
        emit(
            as_json,
            {"name": user.name, "revoked_at": user.revoked_at},
            f"revoked {user.name} ({user.role})",
        )

    run(verbose, action)


@review_app.command("assign")
def assign(
    batch_id: Annotated[str, typer.Argument(help="The batch (see review status).")],
    to: Annotated[str, typer.Option("--to", help="The user who reviews it now.")] = ...,  # type: ignore[assignment]
    out: OutOpt = ...,  # type: ignore[assignment]
    database: DatabaseOpt = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Give a batch to another user (an admin's job; also in the app)."""

    def action() -> None:
        from benchfoundry.decisions.store import ReviewStore
        from benchfoundry.storage.tables import RunFolder

        require_table(out, "review_batches", "review export")
        store = ReviewStore.open(RunFolder(out), database)
        store.assign(batch_id, to, "cli")
        emit(as_json, {"batch_id": batch_id, "to": to}, f"batch {batch_id} is now {to}'s")

    run(verbose, action)
