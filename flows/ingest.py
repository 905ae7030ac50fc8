"""The `ingest` flow: sources in, `images`, `image_sources`, `candidates`, `quarantine` out."""

from __future__ import annotations

from prefect import flow

from benchfoundry.pipeline.registry import StageRun, run_in_flow
from benchfoundry.tasks.ingest.summary import IngestSummary


@flow(name="ingest")
def ingest(stage: StageRun) -> IngestSummary:
    """The ingest stage (`benchfoundry.tasks.ingest.stage:run`), its image batches decoded as Prefect tasks."""
    return run_in_flow("ingest", stage)
