"""`benchfoundry report`: the leaderboard of one or more evaluation runs (Parquet and Markdown),
its plots (per-category accuracy with intervals, vanilla against CircularEval per model, accuracy
by difficulty bin; on open-ended sets, MM-Vet's scores per capability with their spread over the
gradings) and one self-contained HTML page with them (images inline, no CDN, every value from
the data escaped). Chance baselines are always on the board of a multiple-choice set, labelled as
such (an open-ended set has none). Each run's evaluation summary is read from its manifest (the
evaluate stage writes it there); the plots are drawn by `plots.py`. Models asked the same items are compared pair by pair
(`pairing.py`): the board shows each model's rank range, and a model that took part in building
the release it was evaluated on is marked `in_build`, with a sentence saying which way its score
is biased (a generator's upward, a text-only filter's downward)."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from benchfoundry.core.errors import UserError
from benchfoundry.explorer.evaluation_data import write_evaluation_explorer
from benchfoundry.storage.atomic import atomic_write_bytes, atomic_write_table
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.evaluate.board_columns import header, legend
from benchfoundry.tasks.evaluate.comparisons import Comparison, html_section, markdown_lines
from benchfoundry.tasks.evaluate.debias import markdown_lines as debias_markdown
from benchfoundry.tasks.evaluate.failures import reasons_text
from benchfoundry.tasks.evaluate.in_build import InBuild, biased_sentence, labels
from benchfoundry.tasks.evaluate.items import FILE as ITEMS
from benchfoundry.tasks.evaluate.items import ItemAnalysis, write_items
from benchfoundry.tasks.evaluate.items import html_section as items_html
from benchfoundry.tasks.evaluate.items import markdown_lines as items_markdown
from benchfoundry.tasks.evaluate.languages import languages_html, languages_markdown
from benchfoundry.tasks.evaluate.pairing import RunComparisons, compare_runs, rank_key
from benchfoundry.tasks.evaluate.plots import plots as draw
from benchfoundry.tasks.evaluate.report_sections import interval as _interval
from benchfoundry.tasks.evaluate.report_sections import open_html, probe_html
from benchfoundry.tasks.evaluate.report_sections import pct as _pct
from benchfoundry.tasks.evaluate.responses import FILE as RESPONSES
from benchfoundry.tasks.evaluate.responses import write_responses
from benchfoundry.tasks.evaluate.summary import (
    EvaluateSummary,
    _label,
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
    failed: int | None = None  # questions with no answer (scored wrong), by reason below
    failed_by_reason: str | None = None  # `HTTP 400 5, timeout 1`
    refusal_rate: float | None = None  # first answers that named no option (Z)
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
    rank_best: int | None = None  # the ranks it could take, given the significant comparisons
    rank_worst: int | None = None
    # its roles in building the dataset (role key, family, which way it biases the score)
    in_build: list[InBuild] = []
    model_name: str | None = None  # the model as evaluated (without the label)


IN_BUILD_TYPE = pa.list_(
    pa.struct([("role", pa.string()), ("family", pa.string()), ("bias", pa.string())])
)


def _arrow(annotation: object) -> pa.DataType:
    text = str(annotation)
    if "InBuild" in text:
        return IN_BUILD_TYPE
    for name, kind in (
        ("list", pa.list_(pa.string())),
        ("float", pa.float64()),
        ("int", pa.int64()),
    ):
        if name in text:
            return kind
    return pa.string()


# The board's Parquet types, whatever the values (a column of all None, an empty list...).
BOARD_SCHEMA = pa.schema([(n, _arrow(f.annotation)) for n, f in BoardRow.model_fields.items()])


class ReportFiles(BaseModel):
    folder: str
    leaderboard_parquet: str
    leaderboard_markdown: str
    html: str
    plots: list[str]
    rows: int
    responses: str | None = None  # the response matrix (responses.parquet)
    response_rows: int = 0
    comparisons: list[Comparison] = []
    comparison_notes: list[str] = []
    items: str | None = None  # the item analysis (items.parquet)
    item_analysis: list[ItemAnalysis] = []


def read_summary(folder: Path) -> EvaluateSummary:
    recorded = RunFolder(folder).read_manifest().get("evaluate", {}).get("summary")
    if not recorded:
        raise ReportError(
            f"{folder} holds no evaluation (run benchfoundry evaluate --out {folder})"
        )
    return EvaluateSummary.model_validate(recorded)


def board(
    summaries: Sequence[EvaluateSummary], compared: RunComparisons | None = None
) -> list[BoardRow]:
    """The board's rows; rank ranges from `compared` (across the runs), else as each run's
    evaluation recorded them."""
    rows = []
    for s in summaries:
        rows += _language_rows(s)
        dataset = f"{s.dataset.name} {s.dataset.version or ''}".strip()
        if s.dataset.headline:
            dataset += f" [{s.dataset.headline}]"
        gains = {g.model: g for g in s.gains}
        for score in s.scores:
            c = score.circular
            gain = gains.get(score.model) if score.with_image else None
            rank = (
                compared.ranks.get(rank_key(s.run, score.model, score.with_image))
                if compared
                else None
            )
            rows.append(
                BoardRow(
                    run=s.run,
                    dataset=dataset,
                    model=_label(score),
                    kind="model",
                    metric="accuracy",
                    questions=score.questions,
                    failed=score.failed,
                    failed_by_reason=reasons_text(score.failed_by_reason) or None,
                    refusal_rate=score.refusal_rate,
                    vanilla=score.vanilla.accuracy,
                    vanilla_low=score.vanilla.interval[0],
                    vanilla_high=score.vanilla.interval[1],
                    circular=c.accuracy if c else None,
                    circular_low=c.interval[0] if c else None,
                    circular_high=c.interval[1] if c else None,
                    circular_drop=score.vanilla.accuracy - c.accuracy if c else None,
                    mg=gain.mg if gain else None,
                    ml=gain.ml if gain else None,
                    rank_best=rank.best if rank else score.rank_best,
                    rank_worst=rank.worst if rank else score.rank_worst,
                    in_build=score.in_build,
                    model_name=score.model,
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
                    model_name=o.model,
                )  # fmt: skip
            )
        if s.chance_vanilla is not None:
            rows.append(_chance(s, dataset, s.dataset.questions))
    return sorted(
        _one_chance(rows), key=lambda r: (r.dataset, r.kind == "chance", -(r.circular or r.vanilla))
    )


def _chance(s: EvaluateSummary, dataset: str, questions: int) -> BoardRow:
    """A board's chance row: a uniform guess on its questions' option counts."""
    return BoardRow(
        run=s.run, dataset=dataset, model="chance (uniform guess)", kind="chance",
        metric="accuracy", questions=questions, vanilla=s.chance_vanilla or 0.0,
        vanilla_low=None, vanilla_high=None,
        circular=s.chance_circular if s.mode == "circular" else None,
        circular_low=None, circular_high=None, circular_drop=None, mg=None, ml=None,
    )  # fmt: skip


def _one_chance(rows: list[BoardRow]) -> list[BoardRow]:
    """One chance row per board: runs of the same dataset and mode share theirs."""
    kept, seen = [], set()
    for r in rows:
        board = (r.dataset, r.circular is None)
        if r.kind == "chance" and board in seen:
            continue
        if r.kind == "chance":
            seen.add(board)
        kept.append(r)
    return kept


def gaps_by_dataset(summaries: Sequence[EvaluateSummary]) -> dict[str, list]:
    """Each dataset's language gaps over every run, one per model, setting and language (a
    model evaluated again in another run is shown once, as its first run measured it)."""
    out: dict[str, dict[tuple, object]] = {}
    for s in summaries:
        found = out.setdefault(_label_of(s), {})
        for g in s.language_gaps:
            found.setdefault((g.model, g.with_image, g.to), g)
    return {label: list(g.values()) for label, g in out.items() if g}


def _language_rows(s: EvaluateSummary) -> list[BoardRow]:
    """The boards of a bilingual release's other languages, each its own (`[zh]` in the
    dataset column), with the ranks of its own comparisons."""
    rows = []
    for b in s.language_boards:
        dataset = f"{s.dataset.name} {s.dataset.version or ''}".strip() + f" [{b.language}]"
        for score in b.scores:
            c = score.circular
            rows.append(
                BoardRow(
                    run=s.run, dataset=dataset, model=_label(score), kind="model",
                    metric="accuracy", questions=score.questions, failed=score.failed,
                    failed_by_reason=reasons_text(score.failed_by_reason) or None,
                    refusal_rate=score.refusal_rate,
                    vanilla=score.vanilla.accuracy, vanilla_low=score.vanilla.interval[0],
                    vanilla_high=score.vanilla.interval[1],
                    circular=c.accuracy if c else None,
                    circular_low=c.interval[0] if c else None,
                    circular_high=c.interval[1] if c else None,
                    circular_drop=score.vanilla.accuracy - c.accuracy if c else None,
                    mg=None, ml=None, rank_best=score.rank_best, rank_worst=score.rank_worst,
                    in_build=score.in_build, model_name=score.model,
                )
            )  # fmt: skip
        if s.chance_vanilla is not None:  # a twin has its English item's options
            rows.append(_chance(s, dataset, b.questions))
    return rows


def _rank(r: BoardRow) -> str:
    if r.rank_best is None or r.rank_worst is None:
        return "-"
    return str(r.rank_best) if r.rank_best == r.rank_worst else f"{r.rank_best}–{r.rank_worst}"


def _cells(r: BoardRow) -> list[str]:
    return [
        r.dataset,
        r.model,
        str(r.questions),
        "-"
        if r.failed is None
        else str(r.failed) + (f" ({r.failed_by_reason})" if r.failed else ""),
        _pct(r.refusal_rate),
        f"{r.vanilla:.1%} ± {100 * (r.score_std or 0):.1f} (MM-Vet)"
        if r.metric == "mm-vet"
        else _interval(r.vanilla, r.vanilla_low, r.vanilla_high),
        _interval(r.circular, r.circular_low, r.circular_high),
        _pct(r.circular_drop),
        "-" if r.mg is None else f"{r.mg:+.1%}",
        _pct(r.ml),
        _rank(r),
        labels(r.in_build),
    ]


def warnings(rows: Sequence[BoardRow]) -> list[str]:
    """A sentence for each model that took part in building the dataset it was evaluated on."""
    found = {(r.model_name or r.model, r.dataset): r.in_build for r in rows if r.in_build}
    return [biased_sentence(m, roles, d) for (m, d), roles in found.items()]


def markdown(
    rows: Sequence[BoardRow],
    compared: RunComparisons | None = None,
    notes: Sequence[str] = (),
    items: Sequence[ItemAnalysis] = (),
    summaries: Sequence[EvaluateSummary] = (),
) -> str:
    """The board, the in-build warnings and notes, the paired comparisons, the probes of
    looking, then the items."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("<", "&lt;")

    head = header(rows)
    lines = ["# Leaderboard", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(c) for c in _cells(r)) + " |" for r in rows]
    lines += ["", "Columns:", "", *(f"- {cell(x)}" for x in legend(rows))]
    said = [*warnings(rows), *notes]
    if said:
        lines += ["", *(f"- {cell(x)}" for x in said)]
    if compared is not None and (compared.comparisons or compared.notes):
        lines += ["", *markdown_lines(compared.comparisons, compared.notes)]
    for s in summaries:
        for b in s.language_boards:
            if b.comparisons or b.comparison_notes:
                lines += ["", f"## Paired comparisons: {cell(_label_of(s))} [{b.language}]"]
                lines += ["", *markdown_lines(b.comparisons, b.comparison_notes)]
        if s.probes or s.probe_notes:
            label = f"{s.dataset.name} {s.dataset.version or ''}".strip()
            lines += ["", f"## Probes of looking: {cell(label)}", *s.probe_lines()]
        if s.debiased or s.debias_notes:
            label = f"{s.dataset.name} {s.dataset.version or ''}".strip()
            lines += ["", f"## Judge scores corrected by people: {cell(label)}"]
            lines += debias_markdown(s.debiased, s.debias_notes, s.human_grades)
    for label, found in gaps_by_dataset(summaries).items():
        lines += languages_markdown(label, found)
    if items:
        lines += ["", *(cell(x) for x in items_markdown(items))]
    return "\n".join(lines) + "\n"


def _label_of(s: EvaluateSummary) -> str:
    return f"{s.dataset.name} {s.dataset.version or ''}".strip()


def _html(
    rows: Sequence[BoardRow],
    plots: dict[str, bytes],
    summaries: Sequence[EvaluateSummary],
    compared: RunComparisons,
    notes: Sequence[str],
    items: Sequence[ItemAnalysis],
) -> str:
    e = html.escape
    head = "".join(f"<th>{e(h)}</th>" for h in header(rows))
    explained = "".join(
        f"<dt>{e(x.split(': ', 1)[0])}</dt><dd>{e(x.split(': ', 1)[1])}</dd>" for x in legend(rows)
    )
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
    said = [*warnings(rows), *notes]
    warned = "<ul>" + "".join(f"<li>{e(x)}</li>" for x in said) + "</ul>" if said else ""
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<title>benchfoundry leaderboard</title><style>"
        "body{font-family:system-ui,sans-serif;margin:2rem;max-width:1100px}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}"
        "tr.chance td{color:#666;font-style:italic}figure{margin:1rem 0}img{max-width:100%}"
        "dl.legend{font-size:.9em;color:#333}dl.legend dt{font-weight:600;margin-top:.3rem}"
        "</style></head><body><h1>Leaderboard</h1>"
        f"<ul>{datasets}</ul><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        f"<dl class='legend'>{explained}</dl>{warned}{html_section(compared.comparisons, compared.notes)}"
        + "".join(
            html_section(b.comparisons, b.comparison_notes)
            for s in summaries
            for b in s.language_boards
        )
        + "".join(languages_html(label, g) for label, g in gaps_by_dataset(summaries).items())
        + f"{probe_html(summaries)}{items_html(items)}{open_html(summaries)}{images}"
        "</body></html>\n"
    )


def write_report(runs: Sequence[Path], to: Path) -> ReportFiles:
    """The report of the evaluation runs' recorded summaries."""
    return write_summaries([read_summary(r) for r in runs], to)


def build_notes(summaries: Sequence[EvaluateSummary]) -> list[str]:
    """What the releases' manifests leave unsaid about who built them."""
    return [f"{s.dataset.name}: {n}" for s in summaries for n in s.dataset.built_by_notes]


def write_summaries(
    summaries: Sequence[EvaluateSummary], to: Path, compared: RunComparisons | None = None
) -> ReportFiles:
    """Every file of the report; `compared`: the runs' comparisons, when already made."""
    compared = compared if compared is not None else compare_runs(summaries)
    rows = board(summaries, compared)
    notes = list(dict.fromkeys(build_notes(summaries)))
    to.mkdir(parents=True, exist_ok=True)
    items = write_items(summaries, to / ITEMS)
    table = pa.Table.from_pylist([r.model_dump() for r in rows], schema=BOARD_SCHEMA)
    atomic_write_table(to / "leaderboard.parquet", table)
    atomic_write_bytes(
        to / "leaderboard.md", markdown(rows, compared, notes, items, summaries).encode("utf-8")
    )
    plots = draw(summaries)
    for name, data in plots.items():
        atomic_write_bytes(to / name, data)
    response_rows = write_responses(summaries, to / RESPONSES)
    page = _html(rows, plots, summaries, compared, notes, items)
    if write_evaluation_explorer(to, summaries) is not None:  # explore/index.html (docs/explore.md)
        link = "<p><a href='explore/index.html'>Item explorer</a>: every item, every answer</p>"
        page = page.replace("</h1>", "</h1>" + link, 1)
    atomic_write_bytes(to / "report.html", page.encode("utf-8"))
    return ReportFiles(
        folder=str(to),
        leaderboard_parquet=str(to / "leaderboard.parquet"),
        leaderboard_markdown=str(to / "leaderboard.md"),
        html=str(to / "report.html"),
        plots=[str(to / n) for n in plots],
        rows=len(rows),
        responses=str(to / RESPONSES),
        response_rows=response_rows,
        comparisons=compared.comparisons,
        comparison_notes=compared.notes,
        items=str(to / ITEMS),
        item_analysis=items,
    )


def read_board(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()
