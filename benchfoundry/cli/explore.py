"""The `explore` command: the item explorer (a static site, docs/explore.md) of a release or of
an evaluation, written on demand. `publish` and `evaluate` already write one each; this one
writes it again elsewhere, or for a release published before the explorer existed.

explore    a release folder, or an evaluation's run folder, as a static site
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from benchfoundry.cli.common import JsonOpt, UserError, VerboseOpt, app, emit, run


@app.command("explore")
def explore(
    path: Annotated[
        Path,
        typer.Argument(
            help="A release (its version folder, or its name's folder for the latest), or an "
            "evaluation's run folder (`evaluate --out`)."
        ),
    ],
    to: Annotated[
        Path | None,
        typer.Option(
            "--to",
            help="Where to write the site (a release is never changed, so a release needs "
            "it; default for an evaluation: its reports/evaluation/explore/).",
        ),
    ] = None,
    run_folder: Annotated[
        Path | None,
        typer.Option(
            "--run",
            help="A release's run folder: adds the key's evidence, the review history and "
            "the build's judgements.",
        ),
    ] = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Write the item explorer: a table of items, item pages and model pages; open its
    index.html in a browser (no server needed)."""

    def action() -> None:
        from benchfoundry.explorer.evaluation_data import write_evaluation_explorer
        from benchfoundry.explorer.release_data import write_release_explorer
        from benchfoundry.storage.releases import read_latest, release_at
        from benchfoundry.storage.tables import RunFolder
        from benchfoundry.tasks.evaluate.leaderboard import read_summary

        if not path.exists():
            raise UserError(f"{path} does not exist")
        release = release_at(path)
        if release is not None:
            if (latest := read_latest(release)) is not None:
                release = release / latest  # a name's folder: its latest version
            if to is None:
                raise UserError(
                    f"{path} is a published release, which never changes: give --to DIR "
                    f"(its own explorer, written by publish, is {release / 'explore'})"
                )
            if run_folder is not None and not run_folder.is_dir():
                raise UserError(f"run folder {run_folder} does not exist")
            run = RunFolder(run_folder) if run_folder is not None else None
            index = write_release_explorer(release, run, to.resolve())
        else:
            summary = read_summary(path)
            report = path / "reports" / "evaluation"
            index = write_evaluation_explorer(report, [summary], to.resolve() if to else None)
            if index is None:
                raise UserError(
                    f"{path}'s evaluation is of {summary.dataset.path}, not a release: the "
                    "explorer shows releases' items (publish the questions, then evaluate)"
                )
        emit(as_json, {"explorer": str(index)}, f"explorer: {index}")

    run(verbose, action)
