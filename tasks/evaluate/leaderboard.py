"""`benchfoundry report`: the leaderboard of one or more evaluation runs (Parquet and Markdown),
its plots (per-category accuracy with intervals, vanilla against CircularEval per model, accuracy
by difficulty bin; on open-ended sets, MM-Vet's scores per capability with their spread over the
gradings) and one self-contained HTML page with them (images inline, no CDN, every value from
the data escaped). Chance baselines are always on the board of a multiple-choice set, labelled as
such (an open-ended set has none). Each run's evaluation summary is read from its manifest (the
evaluate stage writes it there)."""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from benchfoundry.core.errors import UserError
from benchfoundry.storage.atomic import atomic_write_bytes, atomic_write_table
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.evaluate.summary import (
    EvaluateSummary,
    ModelScore,
    OpenScore,
    _label,
    capabilities,
    spread,
)


class ReportError(UserError, ValueError):
    """A folder with no evaluation to report."""


class BoardRow(BaseModel):
    run: str
    dataset: str
    model: str  # as labelled: what it sees
    kind: str  # model, or chance
    metric: str  # accuracy, or mm-vet (the mean grade over k gradings, on an open-ended set)
    questions: int
    vanilla: float  # accuracy; on an open-ended set, the MM-Vet total (mean over the gradings)
    vanilla_low: float | None
    vanilla_high: float | None
    circular: float | None
    circular_low: float | None
    circular_high: float | None
    circular_drop: float | None  # vanilla minus circular
    mg: float | None
    ml: float | None
    score_std: float | None = None  # MM-Vet: the standard deviation over the gradings
    grading_failures: int | None = None


class ReportFiles(BaseModel):
    folder: str
    leaderboard_parquet: str
    leaderboard_markdown: str
    html: str
    plots: list[str]
    rows: int


def read_summary(folder: Path) -> EvaluateSummary:
    recorded = RunFolder(folder).read_manifest().get("evaluate", {}).get("summary")
    if not recorded:
        raise ReportError(
            f"{folder} holds no evaluation (run benchfoundry evaluate --out {folder})"
        )
    return EvaluateSummary.model_validate(recorded)


def board(summaries: Sequence[EvaluateSummary]) -> list[BoardRow]:
    rows = []
    for s in summaries:
        dataset = f"{s.dataset.name} {s.dataset.version or ''}".strip()
        gains = {g.model: g for g in s.gains}
        for score in s.scores:
            c = score.circular
            gain = gains.get(score.model) if score.with_image else None
            rows.append(
                BoardRow(
                    run=s.run,
                    dataset=dataset,
                    model=_label(score),
                    kind="model",
                    metric="accuracy",
                    questions=score.questions,
                    vanilla=score.vanilla.accuracy,
                    vanilla_low=score.vanilla.low,
                    vanilla_high=score.vanilla.high,
                    circular=c.accuracy if c else None,
                    circular_low=c.low if c else None,
                    circular_high=c.high if c else None,
                    circular_drop=score.vanilla.accuracy - c.accuracy if c else None,
                    mg=gain.mg if gain else None,
                    ml=gain.ml if gain else None,
                )
            )
        for o in s.open_scores:
            gain = gains.get(o.model) if o.with_image else None
            rows.append(
                BoardRow(
                    run=s.run,
                    dataset=dataset,
                    model=_label(o),
                    kind="model",
                    metric="mm-vet",
                    questions=o.questions,
                    vanilla=o.total.mean,
                    vanilla_low=None,
                    vanilla_high=None,
                    circular=None,
                    circular_low=None,
                    circular_high=None,
                    circular_drop=None,
                    mg=gain.mg if gain else None,
                    ml=gain.ml if gain else None,
                    score_std=o.total.std,
                    grading_failures=o.grading_failures,
                )  # fmt: skip
            )
        if s.chance_vanilla is None:
            continue
        rows.append(
            BoardRow(
                run=s.run,
                dataset=dataset,
                model="chance (uniform guess)",
                kind="chance",
                metric="accuracy",
                questions=s.dataset.questions,
                vanilla=s.chance_vanilla,
                vanilla_low=None,
                vanilla_high=None,
                circular=s.chance_circular if s.mode == "circular" else None,
                circular_low=None,
                circular_high=None,
                circular_drop=None,
                mg=None,
                ml=None,
            )  # fmt: skip
        )
    return sorted(rows, key=lambda r: (r.dataset, r.kind == "chance", -(r.circular or r.vanilla)))


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def _interval(value: float | None, low: float | None, high: float | None) -> str:
    if value is None:
        return "-"
    return _pct(value) + (f" [{_pct(low)}, {_pct(high)}]" if low is not None else "")


HEADER = [
    "dataset",
    "model",
    "questions",
    "vanilla [95% CI] (MM-Vet: score ± std)",
    "CircularEval [95% CI]",
    "circular drop",
    "MG",
    "ML",
]


def _cells(r: BoardRow) -> list[str]:
    return [
        r.dataset,
        r.model,
        str(r.questions),
        f"{r.vanilla:.1%} ± {100 * (r.score_std or 0):.1f} (MM-Vet)"
        if r.metric == "mm-vet"
        else _interval(r.vanilla, r.vanilla_low, r.vanilla_high),
        _interval(r.circular, r.circular_low, r.circular_high),
        _pct(r.circular_drop),
        "-" if r.mg is None else f"{r.mg:+.1%}",
        _pct(r.ml),
    ]


def markdown(rows: Sequence[BoardRow]) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("<", "&lt;")

    lines = ["# Leaderboard", "", "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(cell(c) for c in _cells(r)) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _plots(summaries: Sequence[EvaluateSummary]) -> dict[str, bytes]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out: dict[str, bytes] = {}

    def save(name: str, fig) -> None:
        buffer = io.BytesIO()
        fig.tight_layout()
        fig.savefig(buffer, format="png", metadata={"Software": None})
        plt.close(fig)
        out[name] = buffer.getvalue()

    opened: list[OpenScore] = [o for s in summaries for o in s.open_scores]
    if opened:
        save("capabilities.png", _capability_plot(plt, summaries, opened))
    scores: list[tuple[EvaluateSummary, ModelScore]] = [(s, m) for s in summaries for m in s.scores]
    if not scores:
        return out
    labels = [_label(m) for _, m in scores]
    # vanilla against CircularEval, per model
    fig, ax = plt.subplots(figsize=(8, 0.4 * len(scores) + 1.5), dpi=100)
    ys = range(len(scores))
    ax.barh([y - 0.2 for y in ys], [m.vanilla.accuracy for _, m in scores], 0.4, label="vanilla")
    ax.barh(
        [y + 0.2 for y in ys],
        [m.circular.accuracy if m.circular else 0 for _, m in scores],
        0.4,
        label="CircularEval",
    )
    for s in summaries:
        if s.chance_vanilla is not None:
            ax.axvline(s.chance_vanilla, color="grey", linestyle=":", label="chance (vanilla)")
    ax.set_yticks(list(ys), labels)
    ax.set_xlim(0, 1)
    ax.set_xlabel("accuracy")
    ax.legend(loc="lower right", fontsize=8)
    save("vanilla_vs_circular.png", fig)
    # per category, with intervals
    categories = sorted({c for _, m in scores for c in m.by_category})
    if categories:
        fig, ax = plt.subplots(figsize=(9, 4), dpi=100)
        width = 0.8 / max(1, len(scores))
        for i, (_, m) in enumerate(scores):
            values = [m.by_category.get(c, {}).get("vanilla") for c in categories]
            xs = [j + i * width for j in range(len(categories))]
            acc = [v.accuracy if v else 0 for v in values]
            err = [
                [max(0.0, a - v.low) if v else 0 for a, v in zip(acc, values, strict=True)],
                [max(0.0, v.high - a) if v else 0 for a, v in zip(acc, values, strict=True)],
            ]
            ax.bar(xs, acc, width, yerr=err, capsize=2, label=labels[i])
        ax.set_xticks(
            [j + 0.4 - width / 2 for j in range(len(categories))],
            categories,
            rotation=30,
            ha="right",
        )
        ax.set_ylim(0, 1)
        ax.set_ylabel("vanilla accuracy (95% CI)")
        ax.legend(fontsize=7)
        save("per_category.png", fig)
    # by difficulty bin
    bins = [
        b
        for b in ("tough", "hard", "medium", "easy")
        if any(b in m.by_difficulty for _, m in scores)
    ]
    if bins:
        fig, ax = plt.subplots(figsize=(7, 3.5), dpi=100)
        for i, (_, m) in enumerate(scores):
            ax.plot(
                bins,
                [
                    m.by_difficulty[b]["vanilla"].accuracy if b in m.by_difficulty else None
                    for b in bins
                ],
                marker="o",
                label=labels[i],
            )
        ax.set_ylim(0, 1)
        ax.set_ylabel("vanilla accuracy")
        ax.set_xlabel("difficulty bin (quality control)")
        ax.legend(fontsize=7)
        save("by_difficulty.png", fig)
    return out


def _capability_plot(plt, summaries: Sequence[EvaluateSummary], opened: Sequence[OpenScore]):
    """MM-Vet's scores per capability and in total, bars with the spread over the gradings."""
    names = sorted({c for s in summaries for c in capabilities(s)}) + ["total"]
    fig, ax = plt.subplots(figsize=(9, 4), dpi=100)
    width = 0.8 / max(1, len(opened))
    for i, o in enumerate(opened):
        spreads = [o.total if c == "total" else o.by_capability.get(c) for c in names]
        xs = [j + i * width for j in range(len(names))]
        ax.bar(
            xs,
            [x.mean if x else 0 for x in spreads],
            width,
            yerr=[x.std if x else 0 for x in spreads],
            capsize=2,
            label=_label(o),
        )
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(names))], names)
    ax.set_ylim(0, 1)
    ax.set_ylabel("MM-Vet score (mean ± std over gradings)")
    ax.legend(fontsize=7)
    return fig


def _open_html(summaries: Sequence[EvaluateSummary]) -> str:
    """Per open-ended run: scores per capability and integration, and the failed gradings with
    the grader's raw replies."""
    e = html.escape
    parts = []
    for s in summaries:
        if not s.open_scores:
            continue
        names = capabilities(s)
        integrations = sorted({c for o in s.open_scores for c in o.by_integration})
        head = "".join(f"<th>{e(h)}</th>" for h in ["model", "total", *names, *integrations])
        body = "".join(
            "<tr>"
            + "".join(
                f"<td>{e(c)}</td>"
                for c in [
                    _label(o),
                    spread(o.total),
                    *(spread(o.by_capability.get(c)) for c in names),
                    *(spread(o.by_integration.get(c)) for c in integrations),
                ]
            )
            + "</tr>"
            for o in s.open_scores
        )
        failures = "".join(
            f"<li>{e(o.model)}: grading {f.grading} of {e(f.source_id)}: {e(f.why)}; last reply "
            f"<code>{e(repr(f.reply))}</code></li>"
            for o in s.open_scores
            for f in o.failures
        )
        parts.append(
            f"<h2>{e(s.dataset.name)}: scores per capability</h2>"
            f"<p>Graded by {e(s.grader or '')}, {s.open_scores[0].gradings} times per answer; "
            "mean ± standard deviation over the gradings (points of 100).</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            + (f"<h3>Failed gradings</h3><ul>{failures}</ul>" if failures else "")
        )
    return "".join(parts)


def _html(
    rows: Sequence[BoardRow], plots: dict[str, bytes], summaries: Sequence[EvaluateSummary]
) -> str:
    e = html.escape
    head = "".join(f"<th>{e(h)}</th>" for h in HEADER)
    body = "".join(
        ("<tr class='chance'>" if r.kind == "chance" else "<tr>")
        + "".join(f"<td>{e(c)}</td>" for c in _cells(r))
        + "</tr>"
        for r in rows
    )
    datasets = "".join(
        f"<li>{e(s.dataset.format)} <b>{e(s.dataset.name)}</b> {e(s.dataset.version or '')}: "
        f"{s.dataset.questions} questions, {e(s.mode)}</li>"
        for s in summaries
    )
    images = "".join(
        f"<figure><img alt='{e(name)}' src='data:image/png;base64,{base64.b64encode(data).decode()}'>"
        f"<figcaption>{e(name)}</figcaption></figure>"
        for name, data in plots.items()
    )
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<title>benchfoundry leaderboard</title><style>"
        "body{font-family:system-ui,sans-serif;margin:2rem;max-width:1100px}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}"
        "tr.chance td{color:#666;font-style:italic}figure{margin:1rem 0}img{max-width:100%}"
        "</style></head><body><h1>Leaderboard</h1>"
        f"<ul>{datasets}</ul><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        f"{_open_html(summaries)}{images}</body></html>\n"
    )


def write_report(runs: Sequence[Path], to: Path) -> ReportFiles:
    """The report of the evaluation runs' recorded summaries."""
    return write_summaries([read_summary(r) for r in runs], to)


def write_summaries(summaries: Sequence[EvaluateSummary], to: Path) -> ReportFiles:
    rows = board(summaries)
    to.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist([r.model_dump() for r in rows])
    atomic_write_table(to / "leaderboard.parquet", table)
    atomic_write_bytes(to / "leaderboard.md", markdown(rows).encode("utf-8"))
    plots = _plots(summaries)
    for name, data in plots.items():
        atomic_write_bytes(to / name, data)
    atomic_write_bytes(to / "report.html", _html(rows, plots, summaries).encode("utf-8"))
    return ReportFiles(
        folder=str(to),
        leaderboard_parquet=str(to / "leaderboard.parquet"),
        leaderboard_markdown=str(to / "leaderboard.md"),
        html=str(to / "report.html"),
        plots=[str(to / n) for n in plots],
        rows=len(rows),
    )


def read_board(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()
