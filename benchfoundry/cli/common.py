"""What every command shares: the Typer app, the common options, running an action with clean
one-line failures, progress on stderr, and printing the summary."""

from __future__ import annotations

import atexit
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from benchfoundry.core import env, progress
from benchfoundry.core.errors import UserError

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Build, curate and evaluate multiple-choice vision-language benchmarks.",
)
err = Console(stderr=True)

JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print a machine-readable summary on stdout.")
]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Show Prefect's own log lines.")]
# Run folders at URLs that this command opened: committed, and their lease given back, when
# the command's action ends (or the process exits before it runs).
_OPENED = ExitStack()
atexit.register(_OPENED.close)


def _run_folder(value: str | Path, write: bool = True) -> Path:
    """A `--out` value as the local folder to work in: a URL's working copy (under its lease
    when the command writes)."""
    from benchfoundry.core.locations import is_url
    from benchfoundry.storage.objects import StoreError
    from benchfoundry.storage.remote import run_folder_at

    if isinstance(value, Path) or not is_url(value):
        return Path(value)
    try:
        return _OPENED.enter_context(run_folder_at(value, write=write)).path
    except StoreError as exc:
        raise typer.BadParameter(str(exc)) from None


OutOpt = Annotated[
    Path,
    typer.Option(
        "--out",
        "-o",
        help="The run folder to read from and write to (or its URL, s3://...).",
        parser=_run_folder,
    ),
]
# For commands that only read a run: a URL is read from its newest commit, with no lease.
ReadOutOpt = Annotated[
    Path,
    typer.Option(
        "--out",
        "-o",
        help="The run folder to read (or its URL, s3://...).",
        parser=lambda value: _run_folder(value, write=False),
    ),
]
SpecOpt = Annotated[
    Path | None, typer.Option("--spec", help="A build spec (YAML) for stage options.")
]


def run(verbose: bool, action: Callable[[], Any]) -> Any:
    """Set up the offline Prefect environment, run `action`, turn known failures into one line."""
    env.configure(console_level="INFO" if verbose else "CRITICAL")
    try:
        with _OPENED:
            return action()
    except typer.Exit:
        raise
    except UserError as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise typer.Exit(getattr(exc, "exit_code", 1)) from None
    except Exception as exc:  # the one place that turns an unexpected failure into an exit code
        sys.stderr.write(f"error: {type(exc).__name__}: {exc}\n")
        if verbose:
            raise
        raise typer.Exit(1) from None


@contextmanager
def progress_bars(enabled: bool) -> Iterator[None]:
    """Progress on stderr: bars on a terminal; where stderr is not one (a log file, CI), a plain
    line per step every few seconds (`BENCHFOUNDRY_PROGRESS_SECONDS`, default 5), even with
    `--json` (whose output is stdout)."""
    if not err.is_terminal:

        def write(line: str) -> None:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

        interval = float(os.environ.get("BENCHFOUNDRY_PROGRESS_SECONDS", "5"))
        with progress.listening(progress.LineProgress(write, interval)):
            yield
        return
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


@contextmanager
def running_flows(show_progress: bool) -> Iterator[None]:
    """Around a command's flow call, once its input is checked (a bad spec fails before Prefect
    starts): Prefect's embedded server for this command, recorded so that a run killed with
    SIGKILL leaves no server behind past the next command (see `prefect_server`), and progress on
    stderr."""
    from benchfoundry.pipeline.prefect_server import embedded_server

    with embedded_server(), progress_bars(show_progress):
        yield


def emit(as_json: bool, payload: dict[str, Any], text: str) -> None:
    if as_json:
        sys.stdout.write(json.dumps(payload, indent=2, sort_keys=True, default=str) + "\n")
    else:
        sys.stdout.write(text + "\n")


def require_table(out: Path, table: str, before: str) -> None:
    """Fail with what to run first when the run folder lacks a stage's input table."""
    from benchfoundry.storage.releases import release_at
    from benchfoundry.storage.tables import RunFolder

    if (release := release_at(Path(out))) is not None:
        raise UserError(release_not_run(out, release))
    if not Path(out).exists():
        raise UserError(f"run folder {out} does not exist (is the path right? `--out` names it)")
    if not Path(out).is_dir():
        raise UserError(f"{out} is a file, not a run folder")
    if not RunFolder(out).table_named(table).exists():
        raise UserError(
            f"run folder {out} has no {table.replace('_', ' ')} yet: run 'benchfoundry {before}' first"
        )


def release_not_run(out: Path, release: Path) -> str:
    """What to say when a command that works in a run folder is given a published release."""
    from benchfoundry.storage.releases import read_latest, read_manifest

    version = (
        release if (release / "manifest.json").is_file() else release / (read_latest(release) or "")
    )
    manifest = read_manifest(version) if (version / "manifest.json").is_file() else {}
    output = (manifest.get("spec") or {}).get("output")
    built = f" (its build spec's output: {output}, beside that spec)" if output else ""
    return (
        f"{out} is the published release {manifest.get('name', release.name)} "
        f"{manifest.get('version', '')}, not a run folder: this command works in the run folder "
        f"that built it{built} (evaluate reads a release as --dataset)"
    )


def emit_summary(as_json: bool, summary: Any, text: str, out: Path) -> None:
    """A stage's summary: JSON on stdout, or its text and where the outputs are."""
    emit(as_json, summary.model_dump(mode="json"), f"{text}\nOutputs: {out.resolve()}")
