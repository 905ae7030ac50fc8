"""Commands about run folders and inputs: what a run holds, and synthetic scenes to try it on."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from benchfoundry.cli.common import (
    JsonOpt,
    OutOpt,
    ReadOutOpt,
    UserError,
    app,
    emit,
    run,
)


@app.command()
def status(out: ReadOutOpt, as_json: JsonOpt = False) -> None:
    """Rows per table and quarantine counts by stage and reason of a run folder."""

    def action() -> None:
        from benchfoundry.pipeline.build_report import run_state
        from benchfoundry.storage.tables import RunFolder

        run = RunFolder(out)
        if not run.root.is_dir():
            raise UserError(f"run folder {out} does not exist")
        state = run_state(run, n_examples=0)
        failed = (run.read_manifest().get("build") or {}).get("failed")
        lines = [f"Run folder {run.root}"]
        if failed:
            lines.append(
                f"  the last build FAILED in {failed['stage']} ({failed['at']}): {failed['error']}"
            )
        lines += [f"  {t:<14} {n:>6} rows" for t, n in state.table_rows.items()]
        for stage, reasons in state.quarantine_by_stage_reason.items():
            lines += [f"  quarantine {stage}: {r} {n}" for r, n in reasons.items()]
        if state.asked_nothing:
            lines.append(
                f"  pictures asked nothing ({len(state.asked_nothing)}), and why "
                "(docs/generate.md):"
            )
            shown = list(state.asked_nothing.items())
            lines += [f"    {source}: {', '.join(why)}" for source, why in shown[:20]]
            if len(shown) > 20:
                lines.append(f"    ... and {len(shown) - 20} more (--json lists every one)")
        if state.decisions:
            lines.append(
                "  decisions: " + ", ".join(f"{d} {n}" for d, n in state.decisions.items())
            )
        payload = {
            "run": str(run.root),
            "build_failed": failed,
            **state.model_dump(exclude={"examples"}),
        }
        emit(as_json, payload, "\n".join(lines))

    run(False, action)


@app.command()
def synth(
    out: OutOpt,
    objects: Annotated[int, typer.Option(help="Number of object scenes.")] = 24,
    text: Annotated[int, typer.Option(help="Number of text scenes.")] = 12,
    contact: Annotated[
        int,
        typer.Option(help="Number of contact scenes (shapes that touch, overlap or contain)."),
    ] = 0,
    flat: Annotated[
        int,
        typer.Option(
            help="Number of flat scenes (large pure-colour shapes on white, some anti-aliased)."
        ),
    ] = 0,
    clips: Annotated[
        int,
        typer.Option(
            help="Number of single-action video clips (OUT/clips, Something-Something-v2's "
            "labels.json form)."
        ),
    ] = 0,
    procedures: Annotated[
        int,
        typer.Option(
            help="Number of multi-step procedure videos (OUT/procedures, a segments CSV)."
        ),
    ] = 0,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    faulty: Annotated[
        bool, typer.Option(help="Also write deliberately broken inputs under OUT/faulty.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Render synthetic scenes with known ground truth, and reference questions as a TSV; and
    video clips of known actions with their annotations."""

    def action() -> None:
        from benchfoundry.devtools.broken_inputs import write_faulty_images, write_faulty_tsv
        from benchfoundry.devtools.synthetic import write_corpus
        from benchfoundry.devtools.synthetic_video import write_clips

        counts: dict[str, Any] = {"scenes": 0, "questions": 0}
        if objects or text or contact or flat:
            counts = write_corpus(out, objects, text, seed, contact, flat)
        if clips or procedures:
            counts |= write_clips(out, clips, procedures, seed)
        if faulty:
            counts["faulty_images"] = write_faulty_images(out / "faulty" / "images")
            counts["faulty_rows"] = write_faulty_tsv(out / "faulty" / "questions.tsv")
        text_out = f"Wrote {counts['scenes']} scenes and {counts['questions']} reference questions to {out}"
        if clips or procedures:
            text_out += (
                f"; {counts['clips']} action clips and {counts['procedures']} procedure videos "
                f"({counts['segments']} segments)"
            )
        emit(as_json, {"out": str(out), **counts}, text_out)

    run(False, action)
