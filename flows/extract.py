"""The `extract` flow: the run's images in, `visual_facts` (and refusals) out."""

from __future__ import annotations

from prefect import flow

from benchfoundry.pipeline.registry import StageRun, run_in_flow
from benchfoundry.tasks.extract.summary import ExtractSummary


@flow(name="extract")
def extract(stage: StageRun) -> ExtractSummary:
    """The extract stage (`benchfoundry.tasks.extract.stage:run`), its image batches as Prefect tasks."""
    return run_in_flow("extract", stage)
