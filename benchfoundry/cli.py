"""The `benchfoundry` command line: one command per stage, all of one shape.

`benchfoundry STAGE --out RUN [--spec SPEC.yaml] [--json]` reads its inputs from the run folder and
writes its table there; `build SPEC.yaml` runs every stage the spec asks for. With `--json` the
command prints one machine-readable summary on stdout; progress and logs go to stderr.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from benchfoundry import env, progress

app = typer.Typer(no_args_is_help=True, add_completion=False, help=__doc__.splitlines()[0])
err = Console(stderr=True)

JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print a machine-readable summary on stdout.")
]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Show Prefect's own log lines.")]
OutOpt = Annotated[
    Path, typer.Option("--out", "-o", help="The run folder to read from and write to.")
]
SpecOpt = Annotated[
    Path | None, typer.Option("--spec", help="A build spec (YAML) for stage options.")
]


class UserError(Exception):
    """A failure whose message is the whole story (bad input, a missing column...)."""


def _user_errors() -> tuple[type[BaseException], ...]:
    from benchfoundry.answering.predictions import PredictionFileError
    from benchfoundry.gateway.errors import ModelConfigError
    from benchfoundry.packaged import PackageMissingError
    from benchfoundry.spec import SpecError
    from benchfoundry.storage import SchemaMismatchError
    from benchfoundry.taxonomy import TaxonomyError
    from extractors.base import ExtractorUnavailable
    from tasks.ingest_items import SourceFormatError
    from tasks.qc import QCConfigError

    return (
        UserError,
        SpecError,
        SourceFormatError,
        SchemaMismatchError,
        PackageMissingError,
        FileNotFoundError,
        PredictionFileError,
        ModelConfigError,
        ExtractorUnavailable,
        TaxonomyError,
        QCConfigError,
    )


def _run(verbose: bool, action: Callable[[], Any], flows: bool = False) -> Any:
    """Set up the offline Prefect environment, run `action`, turn known failures into one line.
    With `flows`, Prefect's embedded server is started for the action and recorded, so that a
    run killed with SIGKILL leaves no server behind for long (see `prefect_server`)."""
    env.configure(console_level="INFO" if verbose else "CRITICAL")
    try:
        if flows:
            from benchfoundry.prefect_server import embedded_server

            with embedded_server():
                return action()
        return action()
    except typer.Exit:
        raise
    except _user_errors() as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise typer.Exit(1) from None
    except Exception as exc:  # the one place that turns an unexpected failure into an exit code
        sys.stderr.write(f"error: {type(exc).__name__}: {exc}\n")
        if verbose:
            raise
        raise typer.Exit(1) from None


@contextmanager
def _progress_bars(enabled: bool) -> Iterator[None]:
    if not enabled:
        yield
        return
    bars = Progress(
        TextColumn("{task.description:<16}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )
    ids: dict[str, Any] = {}

    def listener(step: str, advance: int, total: int | None) -> None:
        if step not in ids:
            ids[step] = bars.add_task(step, total=total)
        bars.update(ids[step], advance=advance, total=total if total is not None else None)

    with bars, progress.listening(listener):
        yield


def _emit(as_json: bool, payload: dict[str, Any], text: str) -> None:
    if as_json:
        sys.stdout.write(json.dumps(payload, indent=2, sort_keys=True, default=str) + "\n")
    else:
        sys.stdout.write(text + "\n")


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
        with _progress_bars(not as_json):
            summary = build_flow(str(spec), str(out.resolve()) if out else None, chosen)
        _emit(as_json, summary.model_dump(mode="json"), build_text(summary))

    _run(verbose, action, flows=True)


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
        with _progress_bars(not as_json):
            summary = ingest_flow(parsed, str(out.resolve()), options)
        _emit(
            as_json,
            summary.model_dump(mode="json"),
            ingest_markdown(summary) + f"\nOutputs: {out.resolve()}",
        )

    _run(verbose, action, flows=True)


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
        from benchfoundry.storage import RunFolder
        from flows.extract import extract as extract_flow

        options = load_spec(spec).options.extract if spec else ExtractOptions()
        if not RunFolder(out).table_named("images").exists():
            raise UserError(f"run folder {out} has no images yet: run 'benchfoundry ingest' first")
        with _progress_bars(not as_json):
            summary = extract_flow(str(out.resolve()), options)
        _emit(
            as_json,
            summary.model_dump(mode="json"),
            extract_markdown(summary) + f"\nOutputs: {out.resolve()}",
        )

    _run(verbose, action, flows=True)


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
        from benchfoundry.storage import RunFolder
        from flows.generate import generate as generate_flow

        loaded = load_spec(spec) if spec else None
        if not RunFolder(out).table_named("visual_facts").exists():
            raise UserError(
                f"run folder {out} has no visual facts yet: run 'benchfoundry extract' first"
            )
        options = loaded.options.generate if loaded else GenerateOptions()
        summary = generate_flow(
            str(out.resolve()),
            options,
            loaded.taxonomy if loaded else None,
            loaded.models if loaded else {},
            str(loaded.model_catalogue) if loaded and loaded.model_catalogue else None,
        )
        _emit(
            as_json,
            summary.model_dump(mode="json"),
            generate_markdown(summary) + f"\nOutputs: {out.resolve()}",
        )

    _run(verbose, action, flows=True)


@app.command()
def status(out: OutOpt, as_json: JsonOpt = False) -> None:
    """Rows per table and quarantine counts by stage and reason of a run folder."""

    def action() -> None:
        from benchfoundry.report import run_state
        from benchfoundry.storage import RunFolder

        run = RunFolder(out)
        if not run.root.is_dir():
            raise UserError(f"run folder {out} does not exist")
        state = run_state(run, n_examples=0)
        lines = [f"Run folder {run.root}"]
        lines += [f"  {t:<14} {n:>6} rows" for t, n in state.table_rows.items()]
        for stage, reasons in state.quarantine_by_stage_reason.items():
            lines += [f"  quarantine {stage}: {r} {n}" for r, n in reasons.items()]
        if state.decisions:
            lines.append(
                "  decisions: " + ", ".join(f"{d} {n}" for d, n in state.decisions.items())
            )
        payload = {"run": str(run.root), **state.model_dump(exclude={"examples"})}
        _emit(as_json, payload, "\n".join(lines))

    _run(False, action)


@app.command()
def synth(
    out: OutOpt,
    objects: Annotated[int, typer.Option(help="Number of object scenes.")] = 24,
    text: Annotated[int, typer.Option(help="Number of text scenes.")] = 12,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    faulty: Annotated[
        bool, typer.Option(help="Also write deliberately broken inputs under OUT/faulty.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Render synthetic scenes with known ground truth, and reference questions as a TSV."""

    def action() -> None:
        from benchfoundry.faulty import write_faulty_images, write_faulty_tsv
        from benchfoundry.synthetic import write_corpus

        counts: dict[str, Any] = write_corpus(out, objects, text, seed)
        if faulty:
            counts["faulty_images"] = write_faulty_images(out / "faulty" / "images")
            counts["faulty_rows"] = write_faulty_tsv(out / "faulty" / "questions.tsv")
        text_out = f"Wrote {counts['scenes']} scenes and {counts['questions']} reference questions to {out}"
        _emit(as_json, {"out": str(out), **counts}, text_out)

    _run(False, action)


# Commands defined in other modules register themselves on `app` when imported.
from benchfoundry import cli_models, cli_qc  # noqa: E402,F401
