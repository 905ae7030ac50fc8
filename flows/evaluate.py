"""The `evaluate` flow: a dataset and models in, their answers into `results`, scores out, the
leaderboard as a table artifact; `evaluate_dataset`, the same with the command line's parameters
(what a deployment is given); `evaluate_release`, a new release's evaluation on the models its
build spec names (run by the `evaluate-on-release` deployment's trigger); and `report`, the
leaderboard of several evaluation runs."""

from __future__ import annotations

from collections.abc import Sequence

from prefect import flow
from prefect.artifacts import create_table_artifact

from benchfoundry.pipeline.prefect_server import nested_flows
from benchfoundry.pipeline.registry import StageRun, run_in_flow
from benchfoundry.pipeline.spec import stage_from_build
from benchfoundry.tasks.evaluate.in_build import labels
from benchfoundry.tasks.evaluate.leaderboard import (
    ReportFiles,
    board,
    read_summary,
    write_summaries,
)
from benchfoundry.tasks.evaluate.pairing import RunComparisons, compare_runs
from benchfoundry.tasks.evaluate.summary import EvaluateSummary


def board_artifacts(
    summaries: Sequence[EvaluateSummary], key: str, compared: RunComparisons | None = None
) -> None:
    """The leaderboard, the paired comparisons, and each open-ended run's scores per
    capability, as table artifacts."""
    create_table_artifact(
        key=key,
        table=[
            {**r.model_dump(mode="json"), "in_build": labels(r.in_build)}
            for r in board(summaries, compared)
        ],
        description="Leaderboard: accuracy with 95% intervals (MM-Vet score ± std), rank "
        "ranges, models in the build, chance",
    )
    pairs = compared.comparisons if compared else [c for s in summaries for c in s.comparisons]
    if pairs:
        create_table_artifact(
            key=f"{key}-comparisons",
            table=[
                {**c.model_dump(mode="json", exclude={"discordant"}), **c.discordant} for c in pairs
            ],
            description="Paired comparisons: A − B with a 95% paired bootstrap interval "
            "(images resampled), exact McNemar p, Holm-adjusted p",
        )
    rows = [
        {
            "dataset": s.dataset.name,
            "model": o.model,
            "with_image": o.with_image,
            "capability": name,
            "mean": value.mean,
            "std": value.std,
            "questions": value.questions,
        }
        for s in summaries
        for o in s.open_scores
        for name, value in [("total", o.total), *o.by_capability.items(), *o.by_integration.items()]
    ]
    if rows:
        create_table_artifact(
            key=f"{key}-capabilities",
            table=rows,
            description="MM-Vet scores per capability and integration (mean ± std over gradings)",
        )


@flow(name="evaluate")
def evaluate(stage: StageRun) -> EvaluateSummary:
    """An evaluation (`benchfoundry.tasks.evaluate.stage:run`), one Prefect task per model and image setting."""
    summary = run_in_flow("evaluate", stage)
    board_artifacts([summary], "evaluate-leaderboard")
    return summary


@flow(name="evaluate-release")
def evaluate_release(release: str, run: str) -> EvaluateSummary:
    """A new release's evaluation: what the `evaluate-on-release` deployment runs when the
    publish flow announces a release (its event names the release and the build's run folder).
    The models and settings are the build spec's `options.evaluate` (as the run's manifest
    keeps it); the dataset is the release; results go to the build's run folder, so models the
    build itself evaluated on this release are not asked again. A run at a URL is worked on
    under its lease, waited for while the build that published holds it."""
    from benchfoundry.storage.remote import run_folder_at

    with run_folder_at(run, wait_s=3600) as where:
        return _evaluate_release(release, str(where.path))


def _evaluate_release(release: str, run: str) -> EvaluateSummary:
    from pathlib import Path

    from benchfoundry.tasks.evaluate.dataset import EvalDatasetError

    stage = stage_from_build(run, "evaluate")
    if stage is None:
        raise EvalDatasetError(f"{run}: no build manifest names the models to evaluate")
    if not stage.options.evaluate.models:
        raise EvalDatasetError(
            f"{run}: the build spec names no models to evaluate (options.evaluate.models)"
        )
    from benchfoundry.core.locations import is_url

    dataset = release if is_url(release) else Path(release)
    options = stage.options.evaluate.model_copy(update={"dataset": dataset})
    stage.options = stage.options.model_copy(update={"evaluate": options})
    with nested_flows():
        return evaluate(stage)


@flow(name="report")
def report(runs: list[str], to: str) -> ReportFiles:
    """`benchfoundry report`: the leaderboard of evaluation runs, its plots and HTML page, and
    the same tables as artifacts."""
    from pathlib import Path

    summaries = [read_summary(Path(r)) for r in runs]
    compared = compare_runs(summaries)
    files = write_summaries(summaries, Path(to), compared)
    board_artifacts(summaries, "leaderboard", compared)
    return files


@flow(name="evaluate-dataset")
def evaluate_dataset(
    out: str,
    dataset: str,
    models: list[str],
    mode: str = "circular",
    with_image: bool = True,
    judge: str | None = None,
    limit: int | None = None,
    base_llm: str | None = None,
    gradings: int = 5,
    probes: list[str] | None = None,
    families: dict[str, list[str]] | None = None,
    subset: str | None = None,
    items: str | None = None,
    human_grades: str | None = None,
) -> EvaluateSummary:
    """`benchfoundry evaluate` as a flow: the models on the dataset, results into `out`."""
    from benchfoundry.tasks.evaluate.options import EvaluateOptions

    options = EvaluateOptions(
        dataset=dataset,
        models=models,
        mode=mode,
        with_image=with_image,
        judge=judge,
        limit=limit,
        base_llm=base_llm,
        gradings=gradings,
        probes=probes or [],
        families=families or {},
        subset=subset,
        items=items,
        human_grades=human_grades,
    )
    from benchfoundry.storage.remote import run_folder_at

    with run_folder_at(out) as where, nested_flows():  # a URL: its working copy, under its lease
        return evaluate(StageRun.make(str(where.path), evaluate=options))
