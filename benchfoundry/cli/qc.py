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
        from benchfoundry.gateway.models import protect
        from benchfoundry.qc.report import qc_text
        from benchfoundry.spec import QC_STEPS, StageOptions, load_spec
        from flows.qc import qc as qc_flow

        chosen = [s.strip() for s in steps.split(",") if s.strip()]
        unknown = [s for s in chosen if s not in QC_STEPS]
        if unknown or not chosen:
            raise UserError(f"--steps takes {', '.join(QC_STEPS)}; got {steps!r}")
        loaded = load_spec(spec) if spec else None
        require_table(out, "candidates", "generate")
        options = loaded.options if loaded else StageOptions()
        models = dict(loaded.models) if loaded else {}
        if text_only:
            models["text_only"] = [protect(m) for m in text_only]
        if vlm:
            models["vlm"] = [protect(m) for m in vlm]
        select = options.select
        if target is not None:
            select = select.model_copy(update={"target": target, "targets": {}})
        with running_flows(not as_json):
            summary = qc_flow(
                str(out.resolve()),
                [s for s in QC_STEPS if s in chosen],
                options.filter,
                options.consensus,
                select,
                models,
                str(loaded.model_catalogue) if loaded and loaded.model_catalogue else None,
            )
        lines = qc_text(summary.filter, summary.consensus, summary.select)
        text = "\n".join(["Quality control finished.", *lines, f"\nReport: {summary.report}"])
        emit(as_json, summary.model_dump(mode="json"), text)

    run(verbose, action)
