"""The `generate` flow: visual facts in, `candidates` (and refusals) out."""

from __future__ import annotations

from prefect import flow

from benchfoundry.report import GenerateSummary
from benchfoundry.stages import StageRun, run_in_flow


@flow(name="generate")
def generate(stage: StageRun) -> GenerateSummary:
    """The generate stage (`tasks.generate.run`) as one Prefect task."""
    return run_in_flow("generate", stage)
