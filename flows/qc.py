"""The `qc` flow: the filter, consensus and select steps of quality control over a run folder's
candidates, with a report file, a plot file and Prefect artifacts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prefect import flow
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from benchfoundry.qc.report import plot, qc_markdown
from benchfoundry.qc.summary import QCSummary
from benchfoundry.spec import QC_STEPS, ConsensusOptions, FilterOptions, SelectOptions
from benchfoundry.storage import RunFolder, atomic_write_bytes
from tasks.qc import consensus_task, filter_task, select_task


@flow(name="qc")
def qc(
    out: str,
    steps: Sequence[str] = QC_STEPS,
    filter_options: FilterOptions | None = None,
    consensus_options: ConsensusOptions | None = None,
    select_options: SelectOptions | None = None,
    models: dict[str, list[str]] | None = None,
    catalogue: str | None = None,
) -> QCSummary:
    """Run the chosen quality-control steps in order; `select` uses the answers stored by the
    filter and consensus steps of the spec (this run's or an earlier one's). `catalogue` is the
    model catalogue file (default: the project's)."""
    unknown = [s for s in steps if s not in QC_STEPS]
    if unknown:
        raise ValueError(f"unknown quality-control step(s) {unknown}; known: {', '.join(QC_STEPS)}")
    filter_options = filter_options or FilterOptions()
    consensus_options = consensus_options or ConsensusOptions()
    select_options = select_options or SelectOptions()
    models = models or {}
    run = RunFolder(out)
    reports = run.root / "reports"
    summary = QCSummary(run=str(run.root), steps=list(steps), report=str(reports / "qc.md"))
    if "filter" in steps:
        summary.filter = filter_task(out, filter_options, models, catalogue)
    if "consensus" in steps:
        summary.consensus = consensus_task(out, consensus_options, models, catalogue)
    if "select" in steps:
        selected = select_task(
            out, filter_options, consensus_options, select_options, models, list(steps), catalogue
        )
        selected.report = summary.report
        selected.plot = str(plot(selected, reports / "qc.png"))
        summary.select = selected
        create_table_artifact(
            key="qc-selection",
            table=[d.model_dump(mode="json") for d in selected.dimensions],
            description="Selected versus available per dimension",
        )
    markdown = qc_markdown(summary.filter, summary.consensus, summary.select)
    atomic_write_bytes(Path(summary.report), markdown.encode("utf-8"))
    create_markdown_artifact(markdown=markdown, key="qc-summary", description="Quality control")
    run.update_manifest(
        "qc",
        {
            "steps": list(steps),
            "filter": filter_options.model_dump(mode="json"),
            "consensus": consensus_options.model_dump(mode="json"),
            "select": select_options.model_dump(mode="json"),
            "models": models,
            "model_catalogue": catalogue,
            "summary": summary.model_dump(mode="json"),
        },
    )
    return summary
