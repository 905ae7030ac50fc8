"""The `review` flow: scored candidates in, `review_batches` (and the automatic reviewer's
`reviews`) out, ready for the review app."""

from __future__ import annotations

from prefect import flow

from benchfoundry.pipeline.registry import StageRun, run_in_flow
from benchfoundry.tasks.review.summary import ReviewSummary


@flow(name="review")
def review(stage: StageRun) -> ReviewSummary:
    """The review hand-off (`benchfoundry.tasks.review.stage:run`) as one Prefect task."""
    return run_in_flow("review", stage)
