"""What an evaluation reports: per model (with or without the image) accuracy under vanilla
scoring and CircularEval with 95% intervals, per category and difficulty bin, refusals and
MMBench's upper bound, calls; multi-modal gain and leakage where a base LLM was given; chance
baselines for the dataset's exact option counts. Rendered for the CLI, artifacts and reports."""

from __future__ import annotations

from pydantic import BaseModel

from benchfoundry.evaluation.stats import Accuracy


class DatasetInfo(BaseModel):
    path: str
    format: str  # its name in words: "VLMEvalKit MCQ TSV"...
    name: str
    version: str | None
    questions: int
    refused: dict[str, int]  # rows not read, by reason


class ModelScore(BaseModel):
    model: str
    sees: str  # pixels, facts or nothing
    with_image: bool
    run_id: str  # the evaluation configuration its results are stored under
    questions: int  # answered (all passes stored)
    unanswered: int  # failed calls: asked again on the next run
    vanilla: Accuracy
    circular: Accuracy | None
    by_category: dict[str, dict[str, Accuracy]]  # category -> vanilla / circular
    by_difficulty: dict[str, dict[str, Accuracy]]
    refusal_rate: float  # first answers extracted as Z
    upper_bound: float  # vanilla accuracy with refusals counted right (MMBench)
    asked_now: int
    reused: int  # questions whose results were already stored
    calls_made: int
    calls_if_every_pass: int
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0


class Gain(BaseModel):
    model: str
    base: str
    metric: str  # circular or vanilla
    s_v: float
    s_wv: float
    s_t: float
    mg: float
    ml: float
    by_category: dict[str, dict[str, float]]  # category -> mg, ml


class EvaluateSummary(BaseModel):
    run: str
    dataset: DatasetInfo
    mode: str
    scores: list[ModelScore]
    gains: list[Gain]
    chance_vanilla: float
    chance_circular: float
    results: str  # the results table's folder
    report: str | None = None  # its HTML report (RUN/reports/evaluation/report.html)


def _acc(a: Accuracy | None) -> str:
    if a is None:
        return "-"
    return f"{a.accuracy:.1%} [{a.low:.1%}, {a.high:.1%}]"


def _label(s: ModelScore) -> str:
    sees = {"pixels": "sees the image", "facts": "reads extracted facts", "nothing": "blind"}
    shown = sees.get(s.sees, s.sees) if s.with_image else "no image"
    return f"{s.model} ({shown})"


def leaderboard(summary: EvaluateSummary) -> list[list[str]]:
    """Rows of the board, best first by the mode's metric, chance last."""
    key = (
        (lambda s: s.circular.accuracy)
        if summary.mode == "circular"
        else (lambda s: s.vanilla.accuracy)
    )
    rows = [
        [
            _label(s),
            _acc(s.vanilla),
            _acc(s.circular),
            f"{s.refusal_rate:.1%}",
            f"{s.calls_made} of {s.calls_if_every_pass}",
        ]
        for s in sorted(summary.scores, key=key, reverse=True)
    ]
    rows.append(
        [
            "chance (uniform guess)",
            f"{summary.chance_vanilla:.1%}",
            f"{summary.chance_circular:.1%}" if summary.mode == "circular" else "-",
            "-",
            "-",
        ]
    )
    return rows


def evaluate_markdown(summary: EvaluateSummary) -> str:
    d = summary.dataset
    lines = [
        f"# Evaluation on {d.name}" + (f" {d.version}" if d.version else ""),
        "",
        f"{d.format}, {d.questions} questions ({summary.mode}); results in `{summary.results}`",
        "",
        "| model | vanilla [95% CI] | CircularEval [95% CI] | refused | calls made |",
        "|---|---|---|---|---|",
        *("| " + " | ".join(row) + " |" for row in leaderboard(summary)),
    ]
    if summary.gains:
        lines += [
            "",
            "| model | base LLM | S_v | S_wv | S_t | MG | ML |",
            "|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {g.model} | {g.base} | {g.s_v:.1%} | {g.s_wv:.1%} | {g.s_t:.1%} | {g.mg:+.1%} | {g.ml:.1%} |"
            for g in summary.gains
        ]
    if d.refused:
        lines += ["", "Rows not read: " + ", ".join(f"{k} {v}" for k, v in d.refused.items())]
    return "\n".join(lines) + "\n"


def evaluate_text(summary: EvaluateSummary) -> list[str]:
    d = summary.dataset
    out = [
        "",
        f"Evaluation on {d.format} {d.name}"
        + (f" {d.version}" if d.version else "")
        + f": {d.questions} questions, {summary.mode}",
    ]
    for row in leaderboard(summary):
        out.append(f"  {row[0]:<44} vanilla {row[1]:<22} circular {row[2]:<22} refused {row[3]}")
    for g in summary.gains:
        out.append(
            f"  multi-modal gain of {g.model} over {g.base} ({g.metric}): MG {g.mg:+.1%}, "
            f"leakage ML {g.ml:.1%} (S_v {g.s_v:.1%}, S_wv {g.s_wv:.1%}, S_t {g.s_t:.1%})"
        )
    if d.refused:
        out.append("  rows not read: " + ", ".join(f"{k} {v}" for k, v in d.refused.items()))
    for s in summary.scores:
        if s.unanswered:
            out.append(f"  {s.model}: {s.unanswered} questions failed (asked again next run)")
    out.append(f"  results: {summary.results}")
    if summary.report:
        out.append(f"  report: {summary.report} (leaderboard, plots; benchfoundry report RUN...)")
    return out


def evaluate_closing(summary: EvaluateSummary) -> list[str]:
    """The evaluation's place among the build's outputs."""
    d = summary.dataset
    best = max(summary.scores, key=lambda s: s.vanilla.accuracy, default=None)
    lines = [
        f"  evaluation: {len(summary.scores)} model runs on {d.name} {d.version or ''}".rstrip()
    ]
    if best is not None:
        lines[0] += f" (best vanilla: {_label(best)} {best.vanilla.accuracy:.1%})"
    lines.append(f"  results: {summary.results}")
    if summary.report:
        lines.append(f"  evaluation report: {summary.report}")
    return lines
