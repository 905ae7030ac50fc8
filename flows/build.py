"""The `build` flow: the stages a build spec asks for, from the stage registry, in one run
folder, on the task runner the spec chooses."""

from __future__ import annotations

from pathlib import Path

from prefect import flow
from prefect.artifacts import create_markdown_artifact

from benchfoundry.ids import content_hash
from benchfoundry.report import BuildSummary, build_markdown, run_state
from benchfoundry.runners import task_runner
from benchfoundry.spec import load_spec
from benchfoundry.stages import STAGES, StageRun
from benchfoundry.storage import RunFolder


@flow(name="build")
def build(spec_path: str, out: str | None = None, stages: list[str] | None = None) -> BuildSummary:
    """Run the stages the spec names (or `stages`), in the registry's order, each as its own
    flow; return every stage's summary and the state of the run folder."""
    spec = load_spec(spec_path)
    wanted = spec.stages if stages is None else stages
    chosen = [name for name in STAGES if name in wanted]
    run = RunFolder(out or spec.output)
    run.root.mkdir(parents=True, exist_ok=True)
    spec_json = spec.model_dump(mode="json")
    run.update_manifest(
        "build",
        {
            "spec_path": str(Path(spec_path).resolve()),
            "spec": spec_json,
            "spec_hash": content_hash(spec_json, length=16),
            "stages": chosen,
        },
    )
    context = StageRun.from_spec(spec, str(run.root), chosen)
    summaries = {}
    with task_runner(spec.runner) as runner:
        for name in chosen:
            stage_flow = STAGES[name].flow_function()
            if runner is not None:
                stage_flow = stage_flow.with_options(task_runner=runner)
            summaries[name] = stage_flow(context)
    summary = BuildSummary(
        spec=spec.name,
        run=str(run.root),
        stages=chosen,
        summaries=summaries,
        manifest=str(run.manifest_path),
        **run_state(run).model_dump(),
    )
    create_markdown_artifact(
        markdown=build_markdown(summary), key="build-summary", description=f"Build {spec.name}"
    )
    return summary
