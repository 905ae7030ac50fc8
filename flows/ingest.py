"""The `ingest` flow: sources in, `images`, `image_sources`, `candidates`, `quarantine` out."""

from __future__ import annotations

from prefect import flow
from prefect.artifacts import create_markdown_artifact

from benchfoundry import imaging
from benchfoundry.report import IngestSummary, ingest_markdown
from benchfoundry.spec import IngestOptions, Source, describe_source
from benchfoundry.storage import RunFolder
from tasks.ingest import decode_batch_task, read_source_task, store_task
from tasks.ingest_items import SourceItems


@flow(name="ingest")
def ingest(sources: list[Source], out: str, options: IngestOptions | None = None) -> IngestSummary:
    """Read every source, decode images in batches, store new records, quarantine the rest."""
    options = options or IngestOptions()
    items = SourceItems()
    for future in [read_source_task.submit(source) for source in sources]:
        items.extend(future.result())
    limits = imaging.ImageLimits(min_side=options.min_side, max_pixels=options.max_pixels)
    batches = [items.images[i : i + options.batch_size] for i in range(0, len(items.images), options.batch_size)]
    futures = [decode_batch_task.submit(batch, limits, len(items.images)) for batch in batches]
    decoded = [entry for future in futures for entry in future.result()]
    described = [describe_source(s) for s in sources]
    summary = store_task(out, described, items, decoded, options)
    RunFolder(out).update_manifest("ingest", {"sources": described, "options": options.model_dump(), "summary": summary.model_dump()})
    create_markdown_artifact(markdown=ingest_markdown(summary), key="ingest-summary", description="Ingest summary")
    return summary
