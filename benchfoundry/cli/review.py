"""The `review` command group: hand candidates to people and take their decisions back.

review export   batches per dimension and reviewer (the review stage)
review serve    the review web app (loopback, or named hosts behind a token)
review import   decisions from a file (our API's format, or Label Studio's JSON export)
review users    add, list and revoke the app's users (a token each, shown once)
review assign   give a batch to another user
review status   progress, conflicts and agreement; writes RUN/reports/review.md
review adjudicate   settle a conflict between reviewers
"""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from benchfoundry.cli.common import (
    JsonOpt,
    OutOpt,
    SpecOpt,
    UserError,
    VerboseOpt,
    app,
    emit,
    require_table,
    run,
)

DatabaseOpt = Annotated[
    str | None,
    typer.Option(
        "--database",
        envvar="BENCHFOUNDRY_REVIEW_DATABASE",
        help="The review database's URL (e.g. postgresql://user@host/name); default: the spec's "
        "options.review.database, else SQLite in the run folder.",
        show_envvar=False,
    ),
]

review_app = typer.Typer(
    no_args_is_help=True, help="Review batches, the review app, decisions and agreement."
)
app.add_typer(review_app, name="review")


@review_app.command("export")
def export(
    out: OutOpt,
    spec: SpecOpt = None,
    include: Annotated[
        str | None,
        typer.Option(
            "--include", help="Decisions to review, e.g. selected,flagged (default: the spec's)."
        ),
    ] = None,
    reviewers: Annotated[
        list[str] | None,
        typer.Option("--reviewers", help="Reviewer names (repeat); replaces the spec's."),
    ] = None,
    batch_size: Annotated[int | None, typer.Option("--batch-size", min=1)] = None,
    suspects: Annotated[
        bool,
        typer.Option(
            "--suspects",
            help="Batch the item analysis's suspect items instead (RUN/reports/items.parquet, else RUN/reports/evaluation/items.parquet, "
            "written by benchfoundry report), whatever their decision.",
        ),
    ] = False,
    items: Annotated[
        Path | None,
        typer.Option("--items", help="The items.parquet to read with --suspects."),
    ] = None,
    auto: Annotated[
        bool,
        typer.Option(
            "--auto",
            help="The automatic reviewer accepts the candidates that passed every automatic check "
            "(recorded as reviewer 'auto', never counted as a person): then 'publish "
            "--allow-unreviewed' releases them without people.",
        ),
    ] = False,
    database: DatabaseOpt = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Cut the candidates to review into batches per dimension and reviewer (the review stage);
    with --suspects, the items the item analysis found suspect go back to people; with --auto,
    the automatic reviewer's acceptances too."""

    def action() -> None:
        from benchfoundry.cli.stages import run_stage_command, stage_context, with_options
        from benchfoundry.tasks.review.options import Reviewer

        context = stage_context("review", out, spec)
        updates: dict[str, Any] = {}
        if include:
            aliases = {"held": "held_back"}
            chosen = [s.strip() for s in include.split(",") if s.strip()]
            updates["include"] = [aliases.get(s, s) for s in chosen]
        if reviewers:
            updates["reviewers"] = [Reviewer(name=n) for n in reviewers]
        if batch_size:
            updates["batch_size"] = batch_size
        if items and not suspects:
            raise UserError("--items names the file that --suspects reads; add --suspects")
        if suspects:
            from benchfoundry.decisions.suspects import default_items

            if items is None and "://" in str(out):
                raise UserError("a run folder by URL: name a local items.parquet with --items")
            updates["suspects"] = str((items or default_items(out)).resolve())
        if auto:
            updates["auto"] = True
        if database:
            updates["database"] = database
        with_options(context, "review", updates, "review export")
        run_stage_command("review", context, as_json, out)

    run(verbose, action)


@review_app.command("serve")
def serve(
    out: OutOpt,
    host: Annotated[
        str, typer.Option("--host", help="Address to bind (default loopback).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port")] = 8765,
    database: DatabaseOpt = None,
    allowed_hosts: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            help="A Host name the app answers to beside loopback (repeat); needed for a "
            "non-loopback --host, e.g. the public name a TLS proxy forwards.",
        ),
    ] = None,
    trusted_proxies: Annotated[
        list[str] | None,
        typer.Option(
            "--trusted-proxy",
            help="An address whose X-Forwarded-For/-Proto headers are believed (repeat; "
            "default 127.0.0.1, a proxy on this machine).",
        ),
    ] = None,
    verbose: VerboseOpt = False,
) -> None:
    """Serve the review app for a run folder's batches. Every request needs a user's token
    (`review users add`); with no users yet, an admin is made and a one-time sign-in address
    printed."""

    def action() -> None:
        import uvicorn

        from benchfoundry.decisions.store import ReviewStore
        from benchfoundry.storage.tables import RunFolder
        from benchfoundry.tasks.review.app import create_app
        from benchfoundry.tasks.review.app.security import check_allowed_host, is_loopback

        require_table(out, "review_batches", "review export")
        allowed = list(allowed_hosts or [])
        for name in allowed:
            try:
                check_allowed_host(name)
            except ValueError as exc:
                raise UserError(str(exc)) from None
        if not is_loopback(host) and not allowed:
            raise UserError(
                f"--host {host} serves beyond this machine: name the host names it answers "
                "to with --allowed-host NAME (repeatable), e.g. --allowed-host "
                "review.example.org"
            )
        store = ReviewStore.open(RunFolder(out.resolve()), database)
        shown = allowed[0] if allowed else ("127.0.0.1" if host in ("0.0.0.0", "::") else host)
        base = f"http://{shown}:{port}"
        sys.stderr.write(f"review app: {base}/  (Ctrl+C stops it)\ndecisions: {store.shown}\n")
        if not any(u.active for u in store.users()):
            name = "admin" if store.user("admin") is None else f"admin-{int(time.time())}"
            token = store.add_user(name, "admin", created_by="review serve")
            # Shown once, as Jupyter does: opening it signs in (the token moves into a cookie
            # and out of the address).
            sys.stderr.write(
                f"no users yet: made admin '{name}'. Sign in once at\n    {base}/?token={token}\n"
                f"and add annotators with 'benchfoundry review users add NAME --role annotator "
                f"--out {out}'\n"
            )
        # uvicorn stops on SIGTERM and then raises it again: end as Ctrl+C does, so that the
        # snapshot below is written.
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        try:
            uvicorn.run(
                create_app(out.resolve(), store=store, allowed_hosts=allowed),
                host=host,
                port=port,
                log_level="warning",
                access_log=False,  # request lines could hold a ?token=
                server_header=False,
                forwarded_allow_ips=trusted_proxies or ["127.0.0.1"],
            )
        except KeyboardInterrupt:
            pass
        finally:  # the run folder's `reviews` table, from the database, when the app stops
            written = store.snapshot()
            sys.stderr.write(f"{written} decisions written to {out.resolve() / 'reviews'}\n")

    run(verbose, action)


def _read_decisions(path: Path, reviewers_map: Path | None = None) -> tuple[list[Any], str]:
    """Decisions in our API's format (a JSON list, or one JSON object per line) or Label
    Studio's JSON export (tasks with `annotations`, its annotators named by `reviewers_map`);
    and the tool they came from."""
    from benchfoundry.decisions.reviews import Decision

    text = path.read_text(encoding="utf-8")
    try:
        loaded = json.loads(text)
    except json.JSONDecodeError:
        try:
            loaded = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}: neither JSON nor JSON lines ({exc})") from None
    rows = loaded if isinstance(loaded, list) else [loaded]
    if rows and all(isinstance(r, dict) and "annotations" in r for r in rows):
        from benchfoundry.tasks.review.labelstudio import decisions_from_export, read_reviewers_map

        reviewers = read_reviewers_map(reviewers_map) if reviewers_map else None
        return decisions_from_export(rows, reviewers), "labelstudio"
    if reviewers_map is not None:
        raise UserError(
            f"--reviewers-map names Label Studio's annotators, and {path} is not a Label Studio "
            "export (a JSON list of tasks with 'annotations')"
        )
    fields = set(Decision.__dataclass_fields__)
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or set(row) - fields:
            raise UserError(
                f"{path}: decision {i} has unknown fields {sorted(set(row) - fields) if isinstance(row, dict) else row!r}"
            )
        out.append(Decision(**row))
    return out, "file"


@review_app.command("import")
def import_(
    file: Annotated[
        Path, typer.Argument(help="Decisions: our API's JSON, or a Label Studio export.")
    ],
    out: OutOpt = ...,  # type: ignore[assignment]
    database: DatabaseOpt = None,
    reviewers_map: Annotated[
        Path | None,
        typer.Option(
            "--reviewers-map",
            help="Label Studio exports: a JSON object of annotator e-mail (or Label Studio "
            "user id) -> reviewer name.",
        ),
    ] = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Store decisions from a file in the review database (importing the same file twice
    changes nothing), then write the `reviews` table from it."""

    def action() -> None:
        from benchfoundry.decisions.reviews import record
        from benchfoundry.decisions.store import ReviewStore
        from benchfoundry.storage.tables import RunFolder

        require_table(out, "candidates", "generate")
        decisions, tool = _read_decisions(file, reviewers_map)
        store = ReviewStore.open(RunFolder(out), database)
        added, already, refused = record(RunFolder(out), decisions, tool, store=store)
        store.snapshot()
        payload = {
            "read": len(decisions),
            "added": added,
            "already_stored": already,
            "refused": refused,
            "tool": tool,
        }
        text = f"{len(decisions)} decisions read ({tool}): {added} stored, {already} already stored, {len(refused)} refused"
        emit(as_json, payload, "\n".join([text, *(f"  refused {r}" for r in refused)]))
        if refused and not added and not already:
            raise typer.Exit(1)

    run(verbose, action)


@review_app.command("status")
def status(
    out: OutOpt,
    database: DatabaseOpt = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Progress per reviewer and batch, conflicts and agreement; writes RUN/reports/review.md
    and the `reviews` table from the review database."""

    def action() -> None:
        from benchfoundry.decisions.status import review_status, status_markdown
        from benchfoundry.decisions.store import ReviewStore
        from benchfoundry.storage.atomic import atomic_write_bytes
        from benchfoundry.storage.tables import RunFolder

        require_table(out, "candidates", "generate")
        store = ReviewStore.open(RunFolder(out), database)
        state = review_status(RunFolder(out), store)
        store.snapshot()
        report = out.resolve() / "reports" / "review.md"
        markdown = status_markdown(state)
        atomic_write_bytes(report, markdown.encode("utf-8"))
        state.report = str(report)
        emit(as_json, state.model_dump(mode="json"), markdown + f"\nReport: {report}")

    run(verbose, action)


@review_app.command("adjudicate")
def adjudicate(
    question_id: Annotated[str, typer.Argument()],
    out: OutOpt = ...,  # type: ignore[assignment]
    adjudicator: Annotated[str, typer.Option("--adjudicator", help="Who decides.")] = ...,  # type: ignore[assignment]
    decision: Annotated[
        str, typer.Option("--decision", help="accept, reject, fix_answer, edit, move.")
    ] = ...,  # type: ignore[assignment]
    answer: Annotated[str | None, typer.Option("--answer")] = None,
    dimension: Annotated[str | None, typer.Option("--dimension")] = None,
    reason: Annotated[str | None, typer.Option("--reason")] = None,
    database: DatabaseOpt = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Settle a question the reviewers disagree on: the adjudicator's decision counts."""

    def action() -> None:
        from benchfoundry.decisions.reviews import Decision, record
        from benchfoundry.decisions.store import ReviewStore
        from benchfoundry.storage.tables import RunFolder

        made = Decision(
            question_id=question_id,
            reviewer=adjudicator,
            decision=decision,
            new_answer=answer,
            new_dimension=dimension,
            reason=reason,
            adjudication=True,
        )
        store = ReviewStore.open(RunFolder(out), database)
        added, _, refused = record(RunFolder(out), [made], "cli", store=store)
        if refused:
            raise UserError(refused[0])
        store.snapshot()
        emit(
            as_json,
            {"stored": added, "question_id": question_id},
            f"adjudicated {question_id}: {decision}",
        )

    run(verbose, action)


labelstudio_app = typer.Typer(no_args_is_help=True, help="Label Studio tasks and configuration.")
review_app.add_typer(labelstudio_app, name="labelstudio")


@labelstudio_app.command("export")
def labelstudio_export(
    out: OutOpt,
    batch: Annotated[str, typer.Option("--batch", help="The batch id (see review status).")] = ...,  # type: ignore[assignment]
    to: Annotated[Path, typer.Option("--to", help="The tasks file (JSON) to write.")] = ...,  # type: ignore[assignment]
    verbose: VerboseOpt = False,
) -> None:
    """Write a batch as Label Studio tasks, with `label_config.xml` beside them."""

    def action() -> None:
        from benchfoundry.storage.atomic import atomic_write_bytes
        from benchfoundry.storage.tables import RunFolder
        from benchfoundry.tasks.review.app.data import ReviewData
        from benchfoundry.tasks.review.labelstudio import label_config, tasks

        require_table(out, "review_batches", "review export")
        data = ReviewData(RunFolder(out))
        chosen = data.batch(batch)
        if chosen is None:
            raise UserError(
                f"no batch {batch} in {out}; 'benchfoundry review status --out {out}' lists them"
            )
        samples = data.samples(chosen)
        images = {s["image_id"]: data.image(s["image_id"]) for s in samples}
        if missing := sorted(i for i, found in images.items() if found is None):
            raise UserError(f"image(s) {', '.join(m[:12] for m in missing)} are not in {out}")
        clip_ids = {s["meta"]["clip_id"] for s in samples if "clip_id" in s["meta"]}
        clips = {c: found for c in clip_ids if (found := data.clip(c)) is not None}
        written = tasks(samples, images, chosen, clips)
        atomic_write_bytes(to, json.dumps(written, indent=1).encode("utf-8"))
        # a twin batch's configuration differs (its English item shown, no key or move)
        suffix = f"_{chosen.language}" if chosen.language else ""
        config = to.with_name(f"label_config{suffix}.xml")
        # a move stays on the item's medium (a clip's question to another video dimension)
        media = data.media_dimensions()
        moves = sorted({d for s in samples for d in media[s["medium"]]}) or data.dimensions()
        xml = label_config(moves, videos=bool(clips), twins=chosen.language is not None)
        atomic_write_bytes(config, xml.encode("utf-8"))
        sys.stdout.write(f"{len(written)} tasks: {to}\nlabelling configuration: {config}\n")

    run(verbose, action)
