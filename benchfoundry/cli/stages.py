"""The stage commands, made from the stage registry (`benchfoundry.pipeline.registry.STAGES`), all of one
shape: `benchfoundry STAGE --out RUN [--spec SPEC.yaml] [--json]` reads its inputs from the run
folder and writes its tables there (`ingest` also takes its sources as arguments); `build
SPEC.yaml` runs every stage the spec asks for; `stages` lists the registry."""

from __future__ import annotations

from collections.abc import Callable
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
    emit_summary,
    require_table,
    run,
    running_flows,
)


@app.command()
def build(
    spec: Annotated[Path, typer.Argument(help="The build spec (YAML).")],
    out: Annotated[
        str | None,
        typer.Option(
            "--out", "-o", help="Run folder or URL, s3://... (default: the spec's output)."
        ),
    ] = None,
    stages: Annotated[
        str | None,
        typer.Option("--stages", help="Comma-separated stages to run instead of the spec's."),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Only check every model the build would use (provider, credentials, local "
            "weights) and print the report; exit 1 on a problem.",
        ),
    ] = False,
    reach: Annotated[
        bool, typer.Option("--reach", help="With --check: also ask each endpoint model once.")
    ] = False,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Run the build flow: every stage the spec names, into one run folder."""

    def action() -> None:
        from benchfoundry.core.locations import is_url
        from benchfoundry.flows.build import build as build_flow
        from benchfoundry.pipeline.build_report import build_text
        from benchfoundry.pipeline.preflight import check_or_raise, preflight
        from benchfoundry.pipeline.registry import StageRun, stage_names
        from benchfoundry.pipeline.spec import load_spec

        loaded = load_spec(
            spec
        )  # fail fast, before Prefect starts, on a spec that does not validate
        chosen = [s.strip() for s in stages.split(",") if s.strip()] if stages else None
        if chosen is not None and (not chosen or set(chosen) - set(stage_names())):
            raise UserError(f"--stages takes {', '.join(stage_names())}; got {stages!r}")
        where = out if out is None or is_url(out) else str(Path(out).resolve())
        # the run folder the build writes, for the preflight to see what it already holds
        context = StageRun.from_spec(loaded, where or str(loaded.output or ""), chosen)
        if check:
            report = preflight(context, reach=reach)
            emit(as_json, {**report.model_dump(mode="json"), "ok": report.ok}, report.text())
            if not report.ok:
                raise typer.Exit(1)
            return
        check_or_raise(context, reach=reach)  # seconds, before Prefect starts
        with running_flows(not as_json):
            summary = build_flow(str(spec), where, chosen)
        emit(as_json, summary.model_dump(mode="json"), build_text(summary))
        exit_if_incomplete(list(summary.summaries.values()))

    run(verbose, action)


def exit_if_incomplete(summaries: list[Any]) -> None:
    """After everything is written and printed: exit `INCOMPLETE_EXIT`, saying why, when a
    stage could not measure all it was asked (an evaluation's failed calls)."""
    import sys

    from benchfoundry.core.summary import INCOMPLETE_EXIT

    said = [why for s in summaries if (why := s.incomplete())]
    if said:
        sys.stderr.write("\n".join(said) + "\n")
        raise typer.Exit(INCOMPLETE_EXIT)


def stage_context(name: str, out: Path, spec: Path | None) -> Any:
    """What a lone stage command gives its stage: the spec's settings (or the defaults) for the
    run folder `out`."""
    from benchfoundry.pipeline.registry import StageRun
    from benchfoundry.pipeline.spec import load_spec

    if spec is None:
        return StageRun(run=str(out.resolve()), stages=[name])
    return StageRun.from_spec(load_spec(spec), str(out.resolve()), [name])


def with_options(context: Any, name: str, updates: dict[str, Any], command: str) -> None:
    """The stage's options section with a command's flags applied, checked as the spec's would
    be (a bad value is the command's error, naming it)."""
    if not updates:
        return
    section = getattr(context.options, name)
    try:
        options = type(section).model_validate({**section.model_dump(), **updates})
    except ValueError as exc:
        raise UserError(f"{command}: {exc}") from None
    context.options = context.options.model_copy(update={name: options})


def run_stage_command(
    name: str, context: Any, as_json: bool, out: Path, reach: bool = False
) -> Any:
    """Run one registry stage's flow, print its summary as the registry renders it, and return
    it; with `reach`, the preflight asks each endpoint model one tiny question first."""
    from benchfoundry.pipeline.preflight import check_or_raise
    from benchfoundry.pipeline.registry import STAGES

    entry = STAGES[name]
    if entry.requires:
        require_table(out, *entry.requires)
    # the models it will use, with the command's flags applied
    check_or_raise(context, [name], reach=reach)
    with running_flows(not as_json):
        summary = entry.flow_function()(context)
    emit_summary(as_json, summary, summary.markdown(), out)
    return summary


def _command(name: str, does: str, takes_sources: bool) -> Callable[..., None]:
    if takes_sources:

        def command(
            sources: Annotated[
                list[str] | None,
                typer.Argument(help="Folders, .tsv or .parquet files, or 'packaged[:NAME,...]'."),
            ] = None,
            out: OutOpt = ...,  # type: ignore[assignment]
            spec: SpecOpt = None,
            as_json: JsonOpt = False,
            verbose: VerboseOpt = False,
        ) -> None:
            def action() -> None:
                from benchfoundry.pipeline.spec import parse_source

                context = stage_context(name, out, spec)
                if sources:
                    context.sources = [parse_source(s) for s in sources]
                if not context.sources:
                    raise UserError("give at least one SOURCE, or a --spec whose sources to ingest")
                run_stage_command(name, context, as_json, out)

            run(verbose, action)

    else:

        def command(  # type: ignore[misc]
            out: OutOpt,
            spec: SpecOpt = None,
            as_json: JsonOpt = False,
            verbose: VerboseOpt = False,
        ) -> None:
            run(
                verbose,
                lambda: run_stage_command(name, stage_context(name, out, spec), as_json, out),
            )

    command.__doc__ = does[0].upper() + does[1:] + "."
    return command


def _register() -> None:
    from benchfoundry.pipeline.registry import STAGES

    for entry in STAGES.values():
        if entry.group is None:  # grouped stages have their group's command (`qc`)
            app.command(name=entry.name)(
                _command(entry.name, entry.does, "spec:sources" in entry.inputs)
            )


_register()


@app.command(name="stages")
def list_stages(as_json: JsonOpt = False) -> None:
    """List the stage registry: each stage, what it reads and writes, its options (every key is
    described in docs/options.md)."""
    from benchfoundry.pipeline.registry import STAGES

    rows = [entry.describe() for entry in STAGES.values()]
    lines = []
    for row in rows:
        group = f" (in `{row['group']}`)" if row["group"] else ""
        lines += [
            f"{row['name']}{group}: {row['does']}",
            f"  reads   {', '.join(row['inputs'])}",
            f"  writes  {', '.join(row['outputs'])}",
            f"  options options.{row['name']}: {', '.join(row['option_keys'])}",
            f"  entry   {row['entry']}   flow {row['flow']}",
        ]
    lines.append("Each stage's options, with types, defaults and what they do: docs/options.md")
    emit(as_json, {"stages": rows}, "\n".join(lines))
