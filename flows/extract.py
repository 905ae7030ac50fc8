"""The `extract` flow: the run's images in, `visual_facts` (and refusals) out."""

from __future__ import annotations

import time
from collections import deque

from prefect import flow
from prefect.artifacts import create_markdown_artifact

from benchfoundry.records import ImageRecord
from benchfoundry.report import ExtractSummary, extract_markdown
from benchfoundry.spec import ExtractOptions
from benchfoundry.storage import RunFolder
from tasks.extract import (
    done_images,
    extract_batch_task,
    pending_batches,
    run_extractors,
    store_outcome_task,
    summarise,
)
from tasks.model_usage import record_usage_task

# Batches being extracted at once, at most (the backends are shared across these threads).
IN_FLIGHT = 2


@flow(name="extract")
def extract(
    out: str, options: ExtractOptions | None = None, catalogue: str | None = None
) -> ExtractSummary:
    """Extract visual facts for every stored image that has none under this configuration.
    `catalogue` is the spec's model catalogue, for a captioner that calls a model."""
    options = options or ExtractOptions()
    run = RunFolder(out)
    started = time.perf_counter()
    extractors = run_extractors(run, options, catalogue)
    done_before = len(done_images(run, extractors.config_hash))
    total = run.table(ImageRecord).count() - done_before
    batches = pending_batches(run, extractors.config_hash, options.batch_size)
    outcomes = []
    in_flight: deque = deque()
    for batch in batches:
        in_flight.append(extract_batch_task.submit(batch, extractors, total))
        if len(in_flight) >= IN_FLIGHT:
            outcome = in_flight.popleft().result()
            store_outcome_task(out, outcome)
            outcomes.append(outcome)
    while in_flight:
        outcome = in_flight.popleft().result()
        store_outcome_task(out, outcome)
        outcomes.append(outcome)
    if extractors.gateway is not None:
        record_usage_task(extractors.gateway, out)
    summary = summarise(
        run,
        extractors,
        outcomes,
        done_before,
        time.perf_counter() - started,
        options.context_max_chars,
    )
    run.update_manifest(
        "extract", {"options": options.model_dump(mode="json"), "summary": summary.model_dump()}
    )
    create_markdown_artifact(
        markdown=extract_markdown(summary), key="extract-summary", description="Extract summary"
    )
    return summary
