"""The quality-control flows: `filter`, `consensus` and `select`, one per stage, and `qc`, which
runs the chosen ones in turn (the `qc` command)."""

from __future__ import annotations

from collections.abc import Sequence

from prefect import flow
from prefect.artifacts import create_table_artifact

from benchfoundry.pipeline.prefect_server import nested_flows
from benchfoundry.pipeline.registry import QC_STEPS, StageRun, run_in_flow
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.qc.summary import AskSummary, QCSummary, SelectSummary


@flow(name="filter")
def filter_flow(stage: StageRun) -> AskSummary:
    """The text-only ensemble (`benchfoundry.tasks.qc.stage:run_filter`) as one Prefect task."""
    return run_in_flow("filter", stage)


@flow(name="consensus")
def consensus_flow(stage: StageRun) -> AskSummary:
    """The vision-language ensemble (`benchfoundry.tasks.qc.stage:run_consensus`) as one Prefect task."""
    return run_in_flow("consensus", stage)


@flow(name="select")
def select_flow(stage: StageRun) -> SelectSummary:
    """Hits, verdicts and the selection (`benchfoundry.tasks.qc.stage:run_select`), with a table artifact of the
    selection per dimension."""
    summary = run_in_flow("select", stage)
    create_table_artifact(
        key="qc-selection",
        table=[d.model_dump(mode="json") for d in summary.dimensions],
        description="Selected versus available per dimension",
    )
    return summary


@flow(name="qc")
def qc(stage: StageRun, steps: Sequence[str] = QC_STEPS) -> QCSummary:
    """The chosen quality-control steps in order; `select` uses the answers stored by the
    filter and consensus steps of this run or an earlier one."""
    unknown = [s for s in steps if s not in QC_STEPS]
    if unknown:
        raise ValueError(f"unknown quality-control step(s) {unknown}; known: {', '.join(QC_STEPS)}")
    chosen = [s for s in QC_STEPS if s in steps]
    stage = stage.model_copy(update={"stages": chosen})
    flows = {"filter": filter_flow, "consensus": consensus_flow, "select": select_flow}
    summary = QCSummary(
        run=stage.run, steps=chosen, report=str(RunFolder(stage.run).root / "reports" / "qc.md")
    )
    with nested_flows():
        for step in chosen:
            setattr(summary, step, flows[step](stage))
    RunFolder(stage.run).update_manifest("qc", {"steps": chosen})
    return summary
