"""The `generate` flow: visual facts in, `candidates` (and refusals) out."""

from __future__ import annotations

from prefect import flow

from benchfoundry.pipeline.registry import StageRun, run_in_flow
from benchfoundry.tasks.generate.summary import GenerateSummary


@flow(name="generate")
def generate(stage: StageRun) -> GenerateSummary:
    """The generate stage (`benchfoundry.tasks.generate.stage:run`) as one Prefect task."""
    return run_in_flow("generate", stage)
