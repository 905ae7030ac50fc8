"""The `publish` flow: reviewed candidates in, the publish gate, then a versioned release out."""

from __future__ import annotations

from prefect import flow

from benchfoundry.publish_summary import PublishSummary
from benchfoundry.stages import StageRun, run_in_flow


@flow(name="publish")
def publish(stage: StageRun) -> PublishSummary:
    """The release (`tasks.publish.run`) as one Prefect task."""
    return run_in_flow("publish", stage)
