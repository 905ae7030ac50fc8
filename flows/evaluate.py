"""The `evaluate` flow: a dataset and models in, their answers into `results`, scores out."""

from __future__ import annotations

from prefect import flow

from benchfoundry.evaluate_summary import EvaluateSummary
from benchfoundry.stages import StageRun, run_in_flow


@flow(name="evaluate")
def evaluate(stage: StageRun) -> EvaluateSummary:
    """An evaluation (`tasks.evaluate.run`), one Prefect task per model and image setting."""
    return run_in_flow("evaluate", stage)
