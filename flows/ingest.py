"""The `ingest` flow: sources in, `images`, `image_sources`, `candidates`, `quarantine` out."""

from __future__ import annotations

from collections import deque

from prefect import flow
from prefect.artifacts import create_markdown_artifact

from benchfoundry import imaging
from benchfoundry.report import IngestSummary, ingest_markdown
from benchfoundry.spec import IngestOptions, Source, describe_source
from benchfoundry.storage import RunFolder
from tasks.ingest import (
    IngestRun,
    decode_batch_task,
    finish_task,
    read_source_task,
    store_batch_task,
)
from tasks.ingest_items import SourceItems

# Decoded batches waiting to be stored, at most: bounds memory while decoding runs in parallel.
DECODE_AHEAD = 8


@flow(name="ingest")
def ingest(sources: list[Source], out: str, options: IngestOptions | None = None) -> IngestSummary:
    """Read every source, decode images in parallel batches, store each batch in source order,
    then the seed questions; refusals go to the quarantine table with their reasons."""
    options = options or IngestOptions()
    run = RunFolder(out)
    items = SourceItems()
    for future in [read_source_task.submit(source) for source in sources]:
        items.extend(future.result())
    limits = imaging.ImageLimits(min_side=options.min_side, max_pixels=options.max_pixels)
    total = len(items.images)
    batches = deque(
        items.images[i : i + options.batch_size] for i in range(0, total, options.batch_size)
    )
    stage = IngestRun(run, options)
    in_flight: deque = deque()
    while batches or in_flight:
        while batches and len(in_flight) < DECODE_AHEAD:
            in_flight.append(
                decode_batch_task.submit(batches.popleft(), limits, stage.catalog, total)
            )
        store_batch_task(stage, in_flight.popleft().result())
    described = [describe_source(s) for s in sources]
    summary = finish_task(stage, described, items)
    run.update_manifest(
        "ingest",
        {"sources": described, "options": options.model_dump(), "summary": summary.model_dump()},
    )
    create_markdown_artifact(
        markdown=ingest_markdown(summary), key="ingest-summary", description="Ingest summary"
    )
    return summary
