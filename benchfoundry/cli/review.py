"""The `review` command group: hand candidates to people and take their decisions back.

review export   batches per dimension and reviewer (the review stage)
review serve    the review web app on loopback
review import   decisions from a file (our API's format, or Label Studio's JSON export)
review status   progress, conflicts and agreement; writes RUN/reports/review.md
review adjudicate   settle a conflict between reviewers
"""

from __future__ import annotations

import json
import sys
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
            help="Batch the item analysis's suspect items instead (RUN/reports/items.parquet, "
            "written by benchfoundry report), whatever their decision.",
        ),
    ] = False,
    items: Annotated[
        Path | None,
        typer.Option("--items", help="The items.parquet to read with --suspects."),
    ] = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Cut the candidates to review into batches per dimension and reviewer (the review stage);
    with --suspects, the items the item analysis found suspect go back to people."""

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
            from benchfoundry.decisions.suspects import FILE

            if items is None and "://" in str(out):
                raise UserError("a run folder by URL: name a local items.parquet with --items")
            updates["suspects"] = str((items or out / "reports" / FILE).resolve())
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
    token: Annotated[
        str | None,
        typer.Option(
            "--token", envvar="BENCHFOUNDRY_REVIEW_TOKEN", help="Required on every request."
        ),
    ] = None,
    verbose: VerboseOpt = False,
) -> None:
    """Serve the review app for a run folder's batches."""

    def action() -> None:
        import uvicorn

        from benchfoundry.tasks.review.app import create_app

        require_table(out, "review_batches", "review export")
        if host not in ("127.0.0.1", "localhost", "::1") and not token:
            sys.stderr.write(
                f"warning: serving on {host} with no authentication: anyone who can reach it can "
                "decide; pass --token (or BENCHFOUNDRY_REVIEW_TOKEN) to require one\n"
            )
        sys.stderr.write(f"review app: http://{host}:{port}/  (Ctrl+C stops it)\n")
        uvicorn.run(create_app(out.resolve(), token), host=host, port=port, log_level="warning")

    run(verbose, action)


def _read_decisions(path: Path) -> tuple[list[Any], str]:
    """Decisions in our API's format (a JSON list, or one JSON object per line) or Label
    Studio's JSON export (tasks with `annotations`); and the tool they came from."""
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
        from benchfoundry.tasks.review.labelstudio import decisions_from_export

        return decisions_from_export(rows), "labelstudio"
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
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Store decisions from a file in `reviews` (importing the same file twice changes nothing)."""

    def action() -> None:
        from benchfoundry.decisions.reviews import record
        from benchfoundry.storage.tables import RunFolder

        require_table(out, "candidates", "generate")
        decisions, tool = _read_decisions(file)
        added, already, refused = record(RunFolder(out), decisions, tool)
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
def status(out: OutOpt, as_json: JsonOpt = False, verbose: VerboseOpt = False) -> None:
    """Progress per reviewer and batch, conflicts and agreement; writes RUN/reports/review.md."""

    def action() -> None:
        from benchfoundry.decisions.reviews import status as review_status
        from benchfoundry.decisions.status import status_markdown
        from benchfoundry.storage.atomic import atomic_write_bytes
        from benchfoundry.storage.tables import RunFolder

        require_table(out, "candidates", "generate")
        state = review_status(RunFolder(out))
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
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Settle a question the reviewers disagree on: the adjudicator's decision counts."""

    def action() -> None:
        from benchfoundry.decisions.reviews import Decision, record
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
        added, _, refused = record(RunFolder(out), [made], "cli")
        if refused:
            raise UserError(refused[0])
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
        from benchfoundry.tasks.review.app import ReviewData
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
        written = tasks(samples, images, chosen)
        atomic_write_bytes(to, json.dumps(written, indent=1).encode("utf-8"))
        config = to.with_name("label_config.xml")
        atomic_write_bytes(config, label_config(data.dimensions()).encode("utf-8"))
        sys.stdout.write(f"{len(written)} tasks: {to}\nlabelling configuration: {config}\n")

    run(verbose, action)
