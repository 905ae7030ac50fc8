"""The `publish` and `releases` commands.

publish    the publish gate on what review accepted, then a versioned release
releases   the published versions in a releases folder, with what changed from each parent
"""

from __future__ import annotations

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
    run,
)

ToOpt = Annotated[
    str | None,
    typer.Option(
        "--to", help="Releases folder or URL, s3://... (default: the spec's options.publish.to)."
    ),
]


def _context(out: Path, spec: Path | None, to: str | None) -> Any:
    """The publish stage's context: the spec's, else the build spec the run's manifest keeps,
    else the defaults (which need `--to`)."""
    from benchfoundry.cli.stages import stage_context
    from benchfoundry.pipeline.spec import stage_from_build

    if spec is not None:
        return stage_context("publish", out, spec)
    try:
        built = stage_from_build(out, "publish")
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if built is not None:
        return built
    if to is None:
        raise UserError("give --to DIR: no spec (or build manifest) says where releases go")
    return stage_context("publish", out, None)


def _require_decisions(out: Path, database: str | None, allow_unreviewed: bool) -> None:
    """The decisions from the review database into the run's `reviews` table; with none at
    all, the command that gets there."""
    from benchfoundry.decisions.store import snapshot_run
    from benchfoundry.storage.tables import RunFolder

    run_folder = RunFolder(out)
    snapshot_run(run_folder, database)
    if run_folder.table_named("reviews").exists():
        return
    if allow_unreviewed:
        raise UserError(
            f"run folder {out} has no review decisions yet: run 'benchfoundry review export "
            f"--auto --out {out}' first (the automatic reviewer accepts the questions that "
            "passed every automatic check), then publish again with --allow-unreviewed"
        )
    raise UserError(
        f"run folder {out} has no review decisions yet: run 'benchfoundry review export --out "
        f"{out}' and decide in 'benchfoundry review serve --out {out}' (or import decisions "
        f"with 'benchfoundry review import'); to publish without people, 'benchfoundry review "
        f"export --auto --out {out}' then 'benchfoundry publish --allow-unreviewed'"
    )


@app.command("publish")
def publish(
    out: OutOpt,
    spec: SpecOpt = None,
    to: ToOpt = None,
    allow_unreviewed: Annotated[
        bool,
        typer.Option(
            "--allow-unreviewed",
            help="Also release questions only the automatic reviewer accepted (the data and "
            "the card say which).",
        ),
    ] = False,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Run the publish gate on the accepted questions, then write an immutable versioned release."""

    def action() -> None:
        from benchfoundry.cli.stages import run_stage_command, with_options

        context = _context(out, spec, to)
        updates: dict[str, Any] = {}
        if to is not None:
            from benchfoundry.core.locations import is_url

            updates["to"] = to if is_url(to) else Path(to).resolve()
        if allow_unreviewed:
            updates["allow_unreviewed"] = True
        with_options(context, "publish", updates, "publish")
        _require_decisions(out, context.options.review.database, allow_unreviewed)
        run_stage_command("publish", context, as_json, out)

    run(verbose, action)


@app.command("releases")
def list_releases(
    to: Annotated[
        str,
        typer.Option(
            "--to", help="The releases folder (or one benchmark's folder in it), or its URL."
        ),
    ],
    name: Annotated[str | None, typer.Option("--name", help="Only this release name.")] = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """List the published versions: questions, parent and what changed from it, `latest`."""

    def action() -> None:
        from benchfoundry.storage.releases import list_releases as listing

        found = listing(to, name)
        lines = []
        for r in found:
            mark = "  (latest)" if r.latest else ""
            changed = ", ".join(f"{k} {v}" for k, v in r.changes.items())
            lines.append(
                f"{r.name} {r.version}{mark}  {r.created_at}  {r.rows} questions "
                f"({r.human_reviewed} decided by a person, {r.auto_accepted} automatic only)"
            )
            lines.append(f"  parent {r.parent or 'none'}: {changed}")
            lines.append(f"  {r.path}")
        if not found:
            lines.append(f"no releases in {to}")
        emit(as_json, {"releases": [r.model_dump() for r in found]}, "\n".join(lines))

    run(verbose, action)
