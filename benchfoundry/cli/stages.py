"""The stage commands, all of one shape: `benchfoundry STAGE --out RUN [--spec SPEC.yaml]
[--json]` reads its inputs from the run folder and writes its table there; `build SPEC.yaml` runs
every stage the spec asks for."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

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
        Path | None, typer.Option("--out", "-o", help="Run folder (default: the spec's output).")
    ] = None,
    stages: Annotated[
        str | None,
        typer.Option("--stages", help="Comma-separated stages to run instead of the spec's."),
    ] = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Run the build flow: every stage the spec names, into one run folder."""

    def action() -> None:
        from benchfoundry.report import build_text
        from benchfoundry.spec import AVAILABLE_STAGES, load_spec
        from flows.build import build as build_flow

        load_spec(spec)  # fail fast, before Prefect starts, on a spec that does not validate
        chosen = [s.strip() for s in stages.split(",") if s.strip()] if stages else None
        if chosen is not None and (not chosen or set(chosen) - set(AVAILABLE_STAGES)):
            raise UserError(f"--stages takes {', '.join(AVAILABLE_STAGES)}; got {stages!r}")
        with running_flows(not as_json):
            summary = build_flow(str(spec), str(out.resolve()) if out else None, chosen)
        emit(as_json, summary.model_dump(mode="json"), build_text(summary))

    run(verbose, action)


@app.command()
def ingest(
    sources: Annotated[
        list[str] | None,
        typer.Argument(help="Folders, .tsv or .parquet files, or 'packaged[:NAME,...]'."),
    ] = None,
    out: OutOpt = ...,  # type: ignore[assignment]
    spec: SpecOpt = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Ingest images (and seed questions) into a run folder's tables."""

    def action() -> None:
        from benchfoundry.report import ingest_markdown
        from benchfoundry.spec import IngestOptions, load_spec, parse_source
        from flows.ingest import ingest as ingest_flow

        loaded = load_spec(spec) if spec else None
        parsed = [parse_source(s) for s in sources or []] or (loaded.sources if loaded else [])
        if not parsed:
            raise UserError("give at least one SOURCE, or a --spec whose sources to ingest")
        options = loaded.options.ingest if loaded else IngestOptions()
        with running_flows(not as_json):
            summary = ingest_flow(parsed, str(out.resolve()), options)
        emit_summary(as_json, summary, ingest_markdown(summary), out)

    run(verbose, action)


@app.command()
def extract(
    out: OutOpt,
    spec: SpecOpt = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Extract visual facts (instances, OCR lines, captions) for the run's images."""

    def action() -> None:
        from benchfoundry.report import extract_markdown
        from benchfoundry.spec import ExtractOptions, load_spec
        from flows.extract import extract as extract_flow

        loaded = load_spec(spec) if spec else None
        options = loaded.options.extract if loaded else ExtractOptions()
        require_table(out, "images", "ingest")
        catalogue = str(loaded.model_catalogue) if loaded and loaded.model_catalogue else None
        with running_flows(not as_json):
            summary = extract_flow(str(out.resolve()), options, catalogue)
        emit_summary(as_json, summary, extract_markdown(summary), out)

    run(verbose, action)


@app.command()
def generate(
    out: OutOpt,
    spec: SpecOpt = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Write candidate questions from the run's visual facts (templates, and LLMs when configured)."""

    def action() -> None:
        from benchfoundry.report import generate_markdown
        from benchfoundry.spec import GenerateOptions, load_spec
        from flows.generate import generate as generate_flow

        loaded = load_spec(spec) if spec else None
        require_table(out, "visual_facts", "extract")
        options = loaded.options.generate if loaded else GenerateOptions()
        with running_flows(not as_json):
            summary = generate_flow(
                str(out.resolve()),
                options,
                loaded.taxonomy if loaded else None,
                loaded.models if loaded else {},
                str(loaded.model_catalogue) if loaded and loaded.model_catalogue else None,
            )
        emit_summary(as_json, summary, generate_markdown(summary), out)

    run(verbose, action)
