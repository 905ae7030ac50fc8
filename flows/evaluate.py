"""The `evaluate` flow: a dataset and models in, their answers into `results`, scores out; and
`evaluate_dataset`, the same with the command line's parameters (what a deployment is given)."""

from __future__ import annotations

from prefect import flow

from benchfoundry.evaluate_summary import EvaluateSummary
from benchfoundry.stages import StageRun, run_in_flow


@flow(name="evaluate")
def evaluate(stage: StageRun) -> EvaluateSummary:
    """An evaluation (`tasks.evaluate.run`), one Prefect task per model and image setting."""
    return run_in_flow("evaluate", stage)


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
) -> EvaluateSummary:
    """`benchfoundry evaluate` as a flow: the models on the dataset, results into `out`."""
    from benchfoundry.spec import EvaluateOptions

    options = EvaluateOptions(
        dataset=dataset,
        models=models,
        mode=mode,
        with_image=with_image,
        judge=judge,
        limit=limit,
        base_llm=base_llm,
    )
    return evaluate(StageRun.make(out, evaluate=options))
