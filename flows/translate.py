"""The `translate` flow: the run's candidates in, `translations` (and refusals) out."""

from __future__ import annotations

from prefect import flow

from benchfoundry.pipeline.registry import StageRun, run_in_flow
from benchfoundry.tasks.translate.summary import TranslateSummary


@flow(name="translate")
def translate(stage: StageRun) -> TranslateSummary:
    """The translate stage (`benchfoundry.tasks.translate.stage:run`)."""
    return run_in_flow("translate", stage)
