"""The `build` flow: the stages a build spec asks for, from the stage registry, in one run
folder, on the task runner the spec chooses."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from prefect import flow
from prefect.artifacts import create_markdown_artifact

from benchfoundry.core.ids import content_hash
from benchfoundry.gateway.secrets import redact
from benchfoundry.pipeline.build_report import BuildSummary, build_markdown, run_state
from benchfoundry.pipeline.prefect_server import nested_flows
from benchfoundry.pipeline.preflight import check_or_raise
from benchfoundry.pipeline.registry import STAGES, StageRun
from benchfoundry.pipeline.runners import task_runner
from benchfoundry.pipeline.spec import load_spec
from benchfoundry.storage.remote import run_folder_at
from benchfoundry.storage.tables import RunFolder


def record_failure(run: RunFolder, stage: str | None, error: BaseException | None) -> None:
    """The build's outcome in the manifest's `build` section: the stage that failed and why
    (credentials masked), or no failure."""
    section = dict(run.read_manifest().get("build") or {})
    if error is None:
        section.pop("failed", None)
    else:
        message = redact(str(error).strip().splitlines()[0] if str(error).strip() else "")
        section["failed"] = {
            "stage": stage or "(before the first stage)",
            "error": f"{type(error).__name__}: {message}"[:500],
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
    run.update_manifest("build", section)


@flow(name="build")
def build(spec_path: str, out: str | None = None, stages: list[str] | None = None) -> BuildSummary:
    """Run the stages the spec names (or `stages`), in the registry's order, each as its own
    flow; return every stage's summary and the state of the run folder."""
    spec = load_spec(spec_path)
    wanted = spec.stages if stages is None else stages
    chosen = [name for name in STAGES if name in wanted]
    check_or_raise(StageRun.from_spec(spec, "", chosen))  # every model usable, before any stage
    # A run folder at a URL is worked on in a local working copy, committed after each stage.
    with run_folder_at(out or spec.output) as where:
        run = RunFolder(where.path)
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
        current = None
        try:
            with task_runner(spec.runner) as runner, nested_flows():
                for name in chosen:
                    current = name
                    stage_flow = STAGES[name].flow_function()
                    if runner is not None:
                        stage_flow = stage_flow.with_options(task_runner=runner)
                    summaries[name] = stage_flow(context)
                    where.commit(f"after {name}")
        except BaseException as exc:  # said in the run folder, for `status`; then raised as is
            record_failure(run, current, exc)
            raise
        record_failure(run, None, None)
        summary = BuildSummary(
            spec=spec.name,
            run=where.shown,
            stages=chosen,
            summaries=summaries,
            manifest=f"{where.url}/manifest.json" if where.url else str(run.manifest_path),
            **run_state(run).model_dump(),
        )
    create_markdown_artifact(
        markdown=build_markdown(summary), key="build-summary", description=f"Build {spec.name}"
    )
    return summary
