"""The `qc` command: quality control of a run folder's candidates (filter, consensus, select)."""

from __future__ import annotations

from typing import Annotated

import typer

from benchfoundry.cli.common import (
    JsonOpt,
    OutOpt,
    SpecOpt,
    UserError,
    VerboseOpt,
    app,
    emit,
    require_table,
    run,
    running_flows,
)


@app.command()
def qc(
    out: OutOpt,
    spec: SpecOpt = None,
    steps: Annotated[
        str, typer.Option("--steps", help="Comma-separated steps: filter, consensus, select.")
    ] = "filter,consensus,select",
    text_only: Annotated[
        list[str] | None,
        typer.Option("--text-only", help="Text-only model (repeat); replaces the spec's list."),
    ] = None,
    vlm: Annotated[
        list[str] | None,
        typer.Option("--vlm", help="Vision-language model (repeat); replaces the spec's list."),
    ] = None,
    target: Annotated[
        int | None, typer.Option("--target", min=1, help="Questions to select per dimension.")
    ] = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Check candidates: text-only filtering, VLM consensus, hit counts, difficulty, selection."""

    def action() -> None:
        from benchfoundry.cli.stages import stage_context
        from benchfoundry.flows.qc import qc as qc_flow
        from benchfoundry.gateway.models import protect
        from benchfoundry.pipeline.preflight import check_or_raise
        from benchfoundry.pipeline.registry import QC_STEPS

        chosen = [s.strip() for s in steps.split(",") if s.strip()]
        unknown = [s for s in chosen if s not in QC_STEPS]
        if unknown or not chosen:
            raise UserError(f"--steps takes {', '.join(QC_STEPS)}; got {steps!r}")
        context = stage_context("qc", out, spec)
        require_table(out, "candidates", "generate")
        models = dict(context.models)
        if text_only:
            models["text_only"] = [protect(m) for m in text_only]
        if vlm:
            models["vlm"] = [protect(m) for m in vlm]
        options = context.options
        if target is not None:
            select = options.select.model_copy(update={"target": target, "targets": {}})
            options = options.model_copy(update={"select": select})
        context = context.model_copy(update={"models": models, "options": options})
        check_or_raise(context, [s for s in QC_STEPS if s in chosen])  # models the steps call
        with running_flows(not as_json):
            summary = qc_flow(context, [s for s in QC_STEPS if s in chosen])
        lines = [line for step in summary.steps for line in getattr(summary, step).lines()]
        text = "\n".join(["Quality control finished.", *lines, f"\nReport: {summary.report}"])
        emit(as_json, summary.model_dump(mode="json"), text)

    run(verbose, action)
