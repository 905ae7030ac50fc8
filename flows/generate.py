"""The `generate` flow: visual facts in, `candidates` (and refusals) out."""

from __future__ import annotations

from prefect import flow
from prefect.artifacts import create_markdown_artifact

from benchfoundry.report import GenerateSummary, generate_markdown
from benchfoundry.spec import GenerateOptions
from benchfoundry.storage import RunFolder
from tasks.generate import generate_task


@flow(name="generate")
def generate(
    out: str,
    options: GenerateOptions | None = None,
    taxonomy: str | None = None,
    models: dict[str, list[str]] | None = None,
    catalogue: str | None = None,
) -> GenerateSummary:
    """Write candidate questions for every image with visual facts; `catalogue` is the model
    catalogue file (default: the project's)."""
    options = options or GenerateOptions()
    summary = generate_task(out, options, taxonomy, models or {}, catalogue)
    RunFolder(out).update_manifest(
        "generate",
        {
            "options": options.model_dump(mode="json"),
            "taxonomy": taxonomy,
            "models": models or {},
            "summary": summary.model_dump(),
        },
    )
    create_markdown_artifact(
        markdown=generate_markdown(summary), key="generate-summary", description="Generate summary"
    )
    return summary
