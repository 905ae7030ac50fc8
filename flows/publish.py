"""The `publish` flow: reviewed candidates in, the publish gate, then a versioned release out;
a new release is announced with the `benchfoundry.release.published` event, on which the
`evaluate-on-release` deployment's trigger runs its evaluation. `publish_run` is the `publish`
command as a flow (what the `publish-on-demand` deployment is given)."""

from __future__ import annotations

from prefect import flow

from benchfoundry.pipeline.prefect_server import nested_flows
from benchfoundry.pipeline.registry import StageRun, run_in_flow
from benchfoundry.pipeline.spec import stage_from_build
from benchfoundry.storage.remote import run_url
from benchfoundry.tasks.publish.summary import PublishSummary

RELEASE_EVENT = "benchfoundry.release.published"


def announce(summary: PublishSummary) -> None:
    """Emit the event a new release's evaluation is triggered by (nothing for a publish that
    wrote nothing: that content was released before)."""
    from prefect.events import emit_event

    if not summary.written:
        return
    emit_event(
        event=RELEASE_EVENT,
        resource={
            "prefect.resource.id": f"benchfoundry.release.{summary.name}",
            "prefect.resource.name": summary.name,
            "benchfoundry.release.version": summary.version,
        },
        payload={
            "name": summary.name,
            "version": summary.version,
            "release": summary.release,
            "run": run_url(summary.run) or summary.run,  # a working copy's store URL
            "rows": summary.rows,
        },
    )


@flow(name="publish")
def publish(stage: StageRun) -> PublishSummary:
    """The release (`benchfoundry.tasks.publish.stage:run`) as one Prefect task, announced when it is new."""
    summary = run_in_flow("publish", stage)
    announce(summary)
    return summary


@flow(name="publish-run")
def publish_run(
    out: str,
    spec_path: str | None = None,
    to: str | None = None,
    allow_unreviewed: bool | None = None,
) -> PublishSummary:
    """`benchfoundry publish` as a flow: the run folder's accepted questions released with the
    spec's publish options (else those its build manifest keeps), `to` and `allow_unreviewed`
    overriding them. `out` may be a run folder's URL (worked on under its lease)."""
    from benchfoundry.storage.remote import run_folder_at

    with run_folder_at(out) as where:
        return _publish_run(str(where.path), spec_path, to, allow_unreviewed)


def _publish_run(
    out: str, spec_path: str | None, to: str | None, allow_unreviewed: bool | None
) -> PublishSummary:
    from pathlib import Path

    from benchfoundry.core.locations import is_url
    from benchfoundry.pipeline.spec import load_spec

    if spec_path is not None:
        stage = StageRun.from_spec(load_spec(spec_path), str(Path(out).resolve()), ["publish"])
    else:
        built = stage_from_build(out, "publish")
        if built is None and to is None:
            raise ValueError(f"{out}: no build manifest says where releases go; give `to`")
        stage = built or StageRun(run=str(Path(out).resolve()), stages=["publish"])
    updates: dict[str, object] = {}
    if to is not None:
        updates["to"] = to if is_url(to) else Path(to).resolve()
    if allow_unreviewed is not None:
        updates["allow_unreviewed"] = allow_unreviewed
    if updates:
        options = stage.options.publish.model_validate(
            {**stage.options.publish.model_dump(), **updates}
        )
        stage.options = stage.options.model_copy(update={"publish": options})
    with nested_flows():
        return publish(stage)
