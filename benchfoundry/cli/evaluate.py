"""Commands that score models: `evaluate` asks models a dataset's questions; `score` rescores a
VLMEvalKit prediction file made elsewhere."""

from __future__ import annotations

import os
from pathlib import Path
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
    run,
)


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
        from benchfoundry.gateway.assemble import default_catalogue
        from benchfoundry.gateway.cache import ResponseCache

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
            "rows": [r._asdict() for r in rows],
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


def _families(values: list[str] | None) -> dict[str, list[str]] | None:
    """`--family NAME=PATTERN[,PATTERN]` flags as the spec's `families` (a name repeated adds
    its patterns)."""
    from benchfoundry.core.errors import UserError

    if not values:
        return None
    families: dict[str, list[str]] = {}
    for value in values:
        name, sep, patterns = value.partition("=")
        found = [p.strip() for p in patterns.split(",") if p.strip()]
        if not sep or not name.strip() or not found:
            raise UserError(
                f"evaluate: --family {value!r}: give NAME=PATTERN[,PATTERN] (qwen='qwen*,Qwen/*')"
            )
        families.setdefault(name.strip(), []).extend(found)
    return families


def _dataset(value: str | None) -> str | Path | None:
    from benchfoundry.core.locations import is_url

    return value if value is None or is_url(value) else Path(value).resolve()


@app.command()
def evaluate(
    out: OutOpt,
    dataset: Annotated[
        str | None,
        typer.Option(
            "--dataset",
            help="A release folder (or its URL, s3://...), a VLMEvalKit MCQ TSV, an MMStar Parquet, or an open-ended "
            "set: an MM-Vet folder (mm-vet.json, images/) or a VLMEvalKit MMVet TSV (default: "
            "the spec's, else its build's latest release).",
        ),
    ] = None,
    models: Annotated[
        list[str] | None, typer.Option("--model", help="A model to evaluate (repeat).")
    ] = None,
    mode: Annotated[
        str | None, typer.Option("--mode", help="circular (default) or vanilla.")
    ] = None,
    no_image: Annotated[
        bool, typer.Option("--no-image", help="Ask without the images (text only).")
    ] = False,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            help="Model that reads answers the heuristic cannot; on an open-ended set, the grader.",
        ),
    ] = None,
    gradings: Annotated[
        int | None,
        typer.Option("--gradings", min=1, max=20, help="Open-ended sets: gradings per answer (5)."),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="The first N questions.")
    ] = None,
    base_llm: Annotated[
        str | None,
        typer.Option("--base-llm", help="The models' base LLM: multi-modal gain and leakage."),
    ] = None,
    probes: Annotated[
        list[str] | None,
        typer.Option(
            "--probe",
            help="A probe of looking (repeat): image-swap asks every question again with "
            "another image of the dataset.",
        ),
    ] = None,
    families: Annotated[
        list[str] | None,
        typer.Option(
            "--family",
            help="A model family for in_build, NAME=PATTERN[,PATTERN] (glob, case-insensitive; "
            "repeat): a model of a builder's family is marked too.",
        ),
    ] = None,
    subset: Annotated[
        str | None,
        typer.Option(
            "--subset",
            help="anchors:K: ask only K anchor items chosen from the item analysis, and "
            "estimate each model's accuracy on the whole release (tinyBenchmarks).",
        ),
    ] = None,
    items: Annotated[
        Path | None,
        typer.Option(
            "--items",
            help="The items.parquet the anchors come from (default: the one in the reports folder of the run given by --out).",
        ),
    ] = None,
    human_grades: Annotated[
        str | None,
        typer.Option(
            "--human-grades",
            help="Open-ended sets: people's grades of some answers (CSV or JSON Lines: question, "
            "model, grade, grader); each judge score is debiased with them.",
        ),
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            min=1,
            max=1024,
            help="An endpoint model's questions asked at once (default: the model's own, 4); "
            "halved for a while when its server answers 429.",
        ),
    ] = None,
    allow_failures: Annotated[
        bool,
        typer.Option(
            "--allow-failures",
            help="Exit 0 even when some questions could not be answered (they are scored "
            "wrong and counted either way; by default the command then exits 3).",
        ),
    ] = False,
    spec: SpecOpt = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Ask models a dataset's questions (CircularEval or vanilla) and score them with intervals.
    Every endpoint model is asked one tiny question first: one that cannot answer stops the
    command before any work. Exit 3 when some questions could not be answered (see
    --allow-failures); Ctrl-C stops within seconds, keeps the answers, exit 130."""

    def action() -> None:
        from benchfoundry.cli.stages import (
            exit_if_incomplete,
            run_stage_command,
            stage_context,
            with_options,
        )
        from benchfoundry.core import interrupt
        from benchfoundry.pipeline.preflight import check_or_raise
        from benchfoundry.tasks.evaluate.settled import settled_models

        refuse_release(out)
        context = stage_context("evaluate", out, spec)
        _check_model_names(models or [], context.catalogue)
        updates: dict[str, object] = {}
        for name, value in (
            ("dataset", _dataset(dataset)),
            ("models", models or None),
            ("mode", mode),
            ("judge", judge),
            ("limit", limit),
            ("base_llm", base_llm),
            ("gradings", gradings),
            ("probes", probes or None),
            ("families", _families(families)),
            ("subset", subset),
            ("items", items.resolve() if items else None),
            ("human_grades", _dataset(human_grades)),
            ("concurrency", concurrency),
        ):
            if value is not None:
                updates[name] = value
        if no_image:
            updates["with_image"] = False
        if allow_failures:
            updates["allow_failures"] = True
        with_options(context, "evaluate", updates, "evaluate")
        _check_inputs(updates, context.options.evaluate.models)
        notice = (
            "stopping: no new model calls; the calls in flight finish and every answer is "
            "kept (Ctrl-C again to stop at once)"
        )
        # A model with every answer stored is not asked its tiny question: a finished
        # evaluation runs again with no request, and with its server gone.
        check_or_raise(context, ["evaluate"], reach=True, settled=settled_models(context))
        with interrupt.stopping_on_sigint(notice):
            summary = run_stage_command("evaluate", context, as_json, out)
        exit_if_incomplete([summary])

    run(verbose, action)


def refuse_release(out: Path) -> None:
    """A published release never changes: `--out` must not be one (nor a folder inside one)."""
    from benchfoundry.storage.releases import release_at

    found = release_at(out)
    if found is not None:
        raise UserError(
            f"--out {out}: {found} is a published release, and a release never changes; give "
            "an evaluation folder of its own (e.g. --out runs/eval-NAME) and the release as "
            f"--dataset {found}"
        )


def _check_inputs(updates: dict[str, object], spec_models: list[str]) -> None:
    """What needs no model is checked before Prefect starts: models named, a local dataset
    that is one."""
    from benchfoundry.core.locations import is_url
    from benchfoundry.tasks.evaluate.dataset import check_location

    if not updates.get("models") and not spec_models:
        raise UserError(
            "name the models to evaluate: --model NAME (repeat it), or options.evaluate.models "
            "in --spec; `benchfoundry models` lists the named ones"
        )
    dataset = updates.get("dataset")
    if isinstance(dataset, Path) and not is_url(str(dataset)):
        check_location(dataset)


def _check_model_names(names: list[str], catalogue: str | None) -> None:
    """Each `--model` names a model, or the command stops here, in a second, saying which
    name, where it came from, and the names it may have meant."""
    from benchfoundry.gateway.assemble import default_catalogue
    from benchfoundry.gateway.models import ModelConfigError, resolve

    known = default_catalogue(Path(catalogue) if catalogue else None)
    for name in names:
        try:
            resolve(name, known)
        except ModelConfigError as exc:
            raise UserError(f"--model {name}: {exc}") from None


@app.command()
def report(
    runs: Annotated[list[Path], typer.Argument(help="Evaluation run folders (EVALRUN...).")],
    to: Annotated[
        Path | None,
        typer.Option(
            "--to",
            help="Where to write (default: for one run, its reports/evaluation/, the report "
            "evaluate wrote, made again; for several, the first run's reports/).",
        ),
    ] = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Write the leaderboard (Parquet, Markdown) with paired comparisons and rank ranges, its
    plots and one self-contained HTML page."""

    def action() -> None:
        from benchfoundry.cli.common import running_flows
        from benchfoundry.flows.evaluate import report as report_flow
        from benchfoundry.tasks.evaluate.leaderboard import read_summary

        folder = to or runs[0] / "reports" / ("evaluation" if len(runs) == 1 else "")
        for r in runs:  # a folder with no evaluation fails here, before any flow runs
            read_summary(r)
        with running_flows(not as_json):
            files = report_flow([str(r.resolve()) for r in runs], str(folder.resolve()))
        text = Path(files.leaderboard_markdown).read_text(encoding="utf-8")  # board, comparisons
        text += f"\nWritten to {Path(files.folder)}:\n"
        text += f"  leaderboard: {files.leaderboard_parquet}, {files.leaderboard_markdown}\n"
        text += f"  items: {files.items}; responses: {files.responses}\n"
        text += "".join(f"  plot: {p}\n" for p in files.plots)
        text += f"  report: {files.html}"
        emit(as_json, files.model_dump(), text)

    run(verbose, action)
