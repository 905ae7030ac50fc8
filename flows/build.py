"""The `build` flow: the one place where the stages of a benchmark build are chained."""

from __future__ import annotations

from pathlib import Path

from prefect import flow
from prefect.artifacts import create_markdown_artifact

from benchfoundry.ids import content_hash
from benchfoundry.report import BuildSummary, build_markdown, run_state
from benchfoundry.spec import AVAILABLE_STAGES, QC_STEPS, load_spec
from benchfoundry.storage import RunFolder
from flows.extract import extract
from flows.generate import generate
from flows.ingest import ingest
from flows.qc import qc


@flow(name="build")
def build(spec_path: str, out: str | None = None, stages: list[str] | None = None) -> BuildSummary:
    """Run the stages a build spec asks for (or `stages`, in the spec's order), into one run
    folder."""
    spec = load_spec(spec_path)
    if stages is not None:
        spec = spec.model_copy(update={"stages": [s for s in AVAILABLE_STAGES if s in stages]})
    run = RunFolder(out or spec.output)
    run.root.mkdir(parents=True, exist_ok=True)
    spec_json = spec.model_dump(mode="json")
    run.update_manifest(
        "build",
        {
            "spec_path": str(Path(spec_path).resolve()),
            "spec": spec_json,
            "spec_hash": content_hash(spec_json, length=16),
        },
    )
    ingest_summary = extract_summary = generate_summary = None
    if "ingest" in spec.stages:
        ingest_summary = ingest(spec.sources, str(run.root), spec.options.ingest)
    catalogue = str(spec.model_catalogue) if spec.model_catalogue else None
    if "extract" in spec.stages:
        extract_summary = extract(str(run.root), spec.options.extract, catalogue)
    if "generate" in spec.stages:
        generate_summary = generate(
            str(run.root), spec.options.generate, spec.taxonomy, spec.models, catalogue
        )
    qc_summary = None
    steps = [s for s in spec.stages if s in QC_STEPS]
    if steps:
        options = spec.options
        qc_summary = qc(
            str(run.root),
            steps,
            options.filter,
            options.consensus,
            options.select,
            spec.models,
            catalogue,
        )
    summary = BuildSummary(
        spec=spec.name,
        run=str(run.root),
        stages=spec.stages,
        ingest=ingest_summary,
        extract=extract_summary,
        generate=generate_summary,
        qc=qc_summary,
        manifest=str(run.manifest_path),
        **run_state(run).model_dump(),
    )
    create_markdown_artifact(
        markdown=build_markdown(summary), key="build-summary", description=f"Build {spec.name}"
    )
    return summary
