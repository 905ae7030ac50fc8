"""Commands that score models' answers: rescoring a VLMEvalKit prediction file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from benchfoundry.cli.common import JsonOpt, app, emit, run


def judge_cache_path(out: Path | None) -> Path:
    """Where `score` keeps its judge's answers: beside the output file, else in the user's cache
    folder (`$XDG_CACHE_HOME/benchfoundry`, default `~/.cache/benchfoundry`)."""
    if out is not None:
        return out.resolve().parent / "judge_cache.sqlite"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "benchfoundry" / "judge_cache.sqlite"


@app.command()
def score(
    predictions: Annotated[
        Path, typer.Argument(help="A VLMEvalKit prediction file (.xlsx, .tsv, .csv, .parquet).")
    ],
    judge: Annotated[
        str | None,
        typer.Option("--judge", help="Model that reads the undecided answers (else they are Z)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write one row per input row (.parquet, .tsv or .csv)."),
    ] = None,
    cache: Annotated[
        Path | None,
        typer.Option(
            "--cache",
            help="The judge's response cache (default: beside --out, else the user's cache "
            "folder); a rerun replays its calls.",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Rescore a prediction file: extract choices, report vanilla and circular accuracy."""

    def action() -> None:
        from benchfoundry.answering.predictions import (
            read_predictions,
            score_predictions,
            write_rows,
        )
        from benchfoundry.gateway import Gateway
        from benchfoundry.gateway.cache import ResponseCache
        from benchfoundry.gateway.setup import default_catalogue

        gateway = None
        if judge:
            where = cache or judge_cache_path(out)
            gateway = Gateway(default_catalogue(), cache=ResponseCache(where), stage="score")
        rows, scores = score_predictions(read_predictions(predictions), gateway, judge)
        if out:
            write_rows(rows, out)
        lines = [
            f"{row.index}\t{row.extracted}\t{row.extracted_by}\t{'hit' if row.hit else 'miss'}"
            for row in rows
        ]
        circular = (
            "n/a" if scores.circular_accuracy is None else f"{100 * scores.circular_accuracy:.2f}%"
        )
        lines += [
            "",
            f"{scores.questions} questions ({scores.rows} rows): vanilla {100 * scores.vanilla_accuracy:.2f}%, circular {circular}",
            "extracted by: "
            + ", ".join(f"{k} {v}" for k, v in sorted(scores.extracted_by.items())),
        ]
        for category, values in scores.by_category.items():
            lines.append(
                f"  {category}: "
                + ", ".join(
                    f"{k} {v:.3f}" if k != "questions" else f"{int(v)} questions"
                    for k, v in values.items()
                )
            )
        payload = {
            "scores": scores.model_dump(),
            "rows": [r.model_dump() for r in rows],
            "out": str(out) if out else None,
        }
        if gateway is not None:
            used = gateway.ledger.totals()
            payload["judge"] = {
                "model": judge,
                "cache": str(gateway.cache.path),
                **used.model_dump(include={"calls", "cached", "tokens_in", "tokens_out", "cost"}),
            }
            lines.append(
                f"judge {judge}: {used.calls} calls ({used.cached} from the cache "
                f"{gateway.cache.path}), {used.tokens_in} tokens in, {used.tokens_out} out, "
                f"cost {used.cost:.4f}"
            )
        emit(as_json, payload, "\n".join(lines))

    run(False, action)
