"""What an evaluation reports: per model (with or without the image) accuracy under vanilla
scoring and CircularEval with 95% intervals, per category and difficulty bin, refusals and
MMBench's upper bound, calls; multi-modal gain and leakage where a base LLM was given; chance
baselines for the dataset's exact option counts. On an open-ended set (MM-Vet), per model the
total score and the scores per capability and per capability integration, each the mean and
standard deviation over the k gradings, and the gradings that failed; with people's grades of
some answers, each total beside its debiased value (`debias.py`). Paired comparisons
between the models asked the same questions, with each model's rank range; on a release, which
models took part in building it (`in_build`: each role, and which way it biases the score); with the image-swap probe, each model's accuracy
with another question's image against chance. Rendered for the CLI, artifacts and reports."""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel

from benchfoundry.core.summary import StageSummary
from benchfoundry.tasks.evaluate.anchors import AnchorEstimate, anchor_lines
from benchfoundry.tasks.evaluate.board_columns import interval_legend
from benchfoundry.tasks.evaluate.comparisons import Comparison, markdown_lines, setting
from benchfoundry.tasks.evaluate.debias import Debiased, text_lines
from benchfoundry.tasks.evaluate.debias import markdown_lines as debias_markdown
from benchfoundry.tasks.evaluate.failures import reasons_text
from benchfoundry.tasks.evaluate.in_build import InBuild, labels
from benchfoundry.tasks.evaluate.languages import LanguageGap
from benchfoundry.tasks.evaluate.open_summary import (  # noqa: F401  (read from here too)
    GradingFailure,
    OpenScore,
    Spread,
    capabilities,
    open_board,
    open_markdown,
    spread,
)
from benchfoundry.tasks.evaluate.open_summary import score_label as _label
from benchfoundry.tasks.evaluate.probe_lines import p_text, probe_markdown, probe_sentences
from benchfoundry.tasks.evaluate.probes import SwapProbe
from benchfoundry.tasks.evaluate.reuse import reuse_sentence
from benchfoundry.tasks.evaluate.stats import Accuracy
from benchfoundry.tasks.evaluate.stats import accuracy_text as _acc

SHOWN_PAIRS = 10  # paired comparisons in the text; the report shows every one


class DatasetInfo(BaseModel):
    path: str
    format: str  # its name in words: "VLMEvalKit MCQ TSV"...
    name: str
    version: str | None
    questions: int
    refused: dict[str, int]  # rows not read, by reason
    # A release: the models that built it, by role (generator, text-only filter...), and what
    # its manifest leaves unsaid (a role left to its default model).
    built_by: dict[str, list[str]] = {}
    built_by_notes: list[str] = []
    # A bilingual release: items per language, and the headline board's language (en, or
    # POOLED when pooling was asked); `questions` counts the headline board's items.
    languages: dict[str, int] = {}
    headline: str | None = None


class ModelScore(BaseModel):
    model: str
    sees: str  # pixels, facts or nothing
    with_image: bool
    run_id: str  # the evaluation configuration its results are stored under
    questions: int  # every question of the dataset: the denominator of every accuracy
    answered: int = 0  # with every pass stored
    failed: int = 0  # no answer (the call failed, or never made): scored wrong, asked again
    failed_by_reason: dict[str, int] = {}  # HTTP 400, timeout, malformed reply, not asked...
    stopped: str | None = None  # why the model was stopped before it was asked everything
    unanswered: int  # the same as `failed` (its name before failures were scored)
    # A bilingual release's headline score: failures on every language's board (its own
    # `failed` counts its board's items only), what the exit status and closing line count.
    failed_by_language: dict[str, int] = {}
    failed_all_languages: int | None = None
    questions_all_languages: int | None = None
    vanilla: Accuracy
    circular: Accuracy | None
    by_category: dict[str, dict[str, Accuracy]]  # category -> vanilla / circular
    by_difficulty: dict[str, dict[str, Accuracy]]
    by_language: dict[str, dict[str, Accuracy]] = {}  # a bilingual release: en, zh...
    refusal_rate: float  # first answers extracted as Z
    upper_bound: float  # vanilla accuracy with refusals counted right (MMBench)
    asked_now: int
    reused: int  # questions whose results were already stored
    calls_made: int  # requests this run sent to the model (what its server received)
    calls_if_every_pass: int  # passes every question would take (CircularEval stops early)
    calls_cached: int = 0  # answers this run replayed from the response cache
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    # its roles in building the release (empty: none), each with which way it biases the score
    in_build: list[InBuild] = []
    rank_best: int | None = None  # the ranks it could take, given the significant comparisons
    rank_worst: int | None = None

    @property
    def rank(self) -> str:
        if self.rank_best is None or self.rank_worst is None:
            return "-"
        if self.rank_best == self.rank_worst:
            return str(self.rank_best)
        return f"{self.rank_best}–{self.rank_worst}"


POOLED = "all languages, pooled"  # the headline board's language when pooling was asked


class LanguageBoard(BaseModel):
    """One language's board of a bilingual release: its own items only."""

    language: str  # en, zh...
    questions: int
    scores: list[ModelScore]
    comparisons: list[Comparison] = []
    comparison_notes: list[str] = []


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


class EvaluateSummary(StageSummary):
    run: str
    dataset: DatasetInfo
    mode: str  # circular, vanilla, or open (graded, an open-ended set)
    scores: list[ModelScore]
    gains: list[Gain]
    chance_vanilla: float | None  # None for an open-ended set
    chance_circular: float | None
    results: str  # the results table's folder
    open_scores: list[OpenScore] = []
    grader: str | None = None
    report: str | None = None  # its HTML report (RUN/reports/evaluation/report.html)
    comparisons: list[Comparison] = []  # every pair of models on the same questions
    comparison_notes: list[str] = []  # what could not be compared, and why
    probes: list[SwapProbe] = []  # image-swap: each model asked with another question's image
    probe_notes: list[str] = []  # what could not be probed, and why
    anchors: list[AnchorEstimate] = []  # anchors:K: each model's estimated full-release accuracy
    debiased: list[Debiased] = []  # open-ended: judge scores corrected with people's grades
    debias_notes: list[str] = []  # models not corrected, grades that matched nothing, and why
    human_grades: str | None = None  # the human-grades file
    language_gaps: list[LanguageGap] = []  # a bilingual release: each model's loss per language
    language_boards: list[LanguageBoard] = []  # a bilingual release: the other languages' boards
    failures_allowed: bool = False  # options.evaluate.allow_failures: failures exit 0

    def incomplete(self) -> str | None:
        """Questions some model could not answer, unless failures were allowed."""
        if not self.failed or self.failures_allowed:
            return None
        return (
            f"evaluate: {self.failed} answers missing ({'; '.join(self.failure_sentences())}); "
            "exit 3 (allow_failures, --allow-failures: exit 0 with the same scores)"
        )

    @property
    def failed(self) -> int:
        """Questions some model could not answer (scored wrong), on every language's board; 0
        when everything was measured."""
        return sum(_all_failed(s) for s in [*self.scores, *self.open_scores])

    def failure_sentences(self) -> list[str]:
        """What could not be measured, per model (every language's board counted), and what
        to do about it."""
        out = []
        for s in [*self.scores, *self.open_scores]:
            if not _all_failed(s):
                continue
            reasons = Counter(getattr(s, "failed_by_reason", {}) or {})
            for b in self.language_boards:
                for other in b.scores:
                    if (other.model, other.with_image) == (s.model, s.with_image):
                        reasons.update(other.failed_by_reason)
            why = reasons_text(dict(reasons))
            languages = getattr(s, "failed_by_language", {}) or {}
            if len(languages) > 1:
                why = ", ".join(f"{k} {v}" for k, v in languages.items()) + f"; {why}"
            of = getattr(s, "questions_all_languages", None) or self.dataset.questions
            out.append(
                f"{_label(s)}: {_all_failed(s)} of {of} questions failed"
                + (f" ({why})" if why else "")
                + ", scored wrong; the same command asks them again"
                + (f"; {s.stopped}" if getattr(s, "stopped", None) else "")
            )
        return out

    def probe_lines(self) -> list[str]:
        """The probes' Markdown: the image-swap table, its warnings and notes."""
        return probe_markdown(self.probes, self.probe_notes)

    def in_build_sentences(self) -> list[str]:
        """The plain warning for each model that took part in building the dataset."""
        from benchfoundry.tasks.evaluate.in_build import biased_sentence

        d = self.dataset
        name = f"{d.name} {d.version or ''}".strip()
        seen = dict.fromkeys(s.model for s in self.scores if s.in_build)
        roles = {s.model: s.in_build for s in self.scores}
        return [biased_sentence(m, roles[m], name) for m in seen]

    def markdown(self) -> str:
        d = self.dataset
        lines = [
            f"# Evaluation on {d.name}" + (f" {d.version}" if d.version else ""),
            "",
            f"{d.format}, {d.questions} questions{_board_of(d)} ({self.mode}); results in "
            f"`{self.results}`",
            "",
        ]
        if self.mode == "open":
            lines += open_markdown(self)
            lines += debias_markdown(self.debiased, self.debias_notes, self.human_grades)
        else:
            lines += _table(leaderboard(self))
            lines += ["", *(f"- {x}" for x in self.failure_sentences())]
            lines += [f"- {x}" for x in [reuse_sentence(self.scores)] if x]
            lines += [f"- {x}" for x in self.in_build_sentences()]
            lines += [f"- {x}" for x in d.built_by_notes]
        for b in self.language_boards:
            lines += ["", f"## Board: {b.language} ({b.questions} questions, its items only)", ""]
            lines += _table(leaderboard(self, b.scores))
            if b.comparisons or b.comparison_notes:
                lines += ["", *markdown_lines(b.comparisons, b.comparison_notes)]
        if self.gains:
            lines += [
                "",
                "| model | base LLM | S_v | S_wv | S_t | MG | ML |",
                "|---|---|---|---|---|---|---|",
            ]
            lines += [
                f"| {g.model} | {g.base} | {g.s_v:.1%} | {g.s_wv:.1%} | {g.s_t:.1%} | {g.mg:+.1%} | {g.ml:.1%} |"
                for g in self.gains
            ]
        lines += probe_markdown(self.probes, self.probe_notes)
        if self.anchors:
            lines += ["", *anchor_lines(self.anchors, "| "), ""]
        if self.comparisons or self.comparison_notes:
            lines += ["", *markdown_lines(self.comparisons, self.comparison_notes)]
        if self.language_gaps:
            lines += ["", "## Across languages (the same items, paired)", ""]
            lines += [f"- {g.line()}" for g in self.language_gaps]
        if d.refused:
            lines += ["", "Rows not read: " + ", ".join(f"{k} {v}" for k, v in d.refused.items())]
        if self.mode != "open":
            lines += ["", *(f"- {x}" for x in interval_legend(_paired(self)))]
        return "\n".join(lines) + "\n"

    def lines(self) -> list[str]:
        d = self.dataset
        out = [
            "",
            f"Evaluation on {d.format} {d.name}"
            + (f" {d.version}" if d.version else "")
            + f": {d.questions} questions{_board_of(d)}, {self.mode}",
        ]
        for language, scores in [(None, self.scores)] + [
            (b.language, b.scores) for b in self.language_boards
        ]:
            if language is not None:
                out.append(f"  board: {language} (its items only)")
            out += _board_lines(self, scores)
        out += [f"  {x}" for x in self.in_build_sentences()]
        out += [f"  {x}" for x in [reuse_sentence(self.scores)] if x]
        out += [f"  {x}" for x in d.built_by_notes]
        shown = [c for b in [self, *self.language_boards] for c in b.comparisons]
        shown = [c for c in shown if c.difference is not None]
        for c in shown[:SHOWN_PAIRS]:
            interval = "no interval" if c.low is None else f"[{c.low:+.1%}, {c.high:+.1%}]"
            out.append(
                f"  {c.model_a} vs {c.model_b} ({c.dataset}, {setting(c.with_image)}): "
                f"{c.difference:+.1%} {interval}, McNemar p {c.p_value:.4g}, Holm {c.p_adjusted:.4g}"
                + (" (significant)" if c.significant else "")
            )
        if len(shown) > SHOWN_PAIRS:
            out.append(f"  ... and {len(shown) - SHOWN_PAIRS} more pairs in the report")
        out += [f"  {x}" for x in self.comparison_notes]
        out += [f"  language gap: {g.line()}" for g in self.language_gaps]
        names = capabilities(self)
        for s in sorted(self.open_scores, key=lambda s: s.total.mean, reverse=True):
            out.append(
                f"  {_label(s):<44} total {spread(s.total):<16} "
                + ", ".join(
                    f"{c} {spread(s.by_capability[c])}" for c in names if c in s.by_capability
                )
            )
            if s.grading_failures:
                out.append(
                    f"    {s.grading_failures} gradings failed (replies kept in results; "
                    "not counted in the scores)"
                )
        if self.open_scores:
            out.append(
                f"  graded by {self.grader}, {self.open_scores[0].gradings} times per answer "
                "(mean ± standard deviation over the gradings, points of 100)"
            )
        out += [f"  {x}" for x in text_lines(self.debiased, self.debias_notes)]
        for g in self.gains:
            out.append(
                f"  multi-modal gain of {g.model} over {g.base} ({g.metric}): MG {g.mg:+.1%}, "
                f"leakage ML {g.ml:.1%} (S_v {g.s_v:.1%}, S_wv {g.s_wv:.1%}, S_t {g.s_t:.1%})"
            )
        for p in self.probes:
            out.append(
                f"  image swapped, {p.model} ({p.metric}): {p.swapped.accuracy:.1%} against "
                f"chance {p.chance:.1%} ({p_text(p.p_value)}), {p.normal:.1%} with its own image, "
                f"gap {p.gap:+.1%}"
            )
        out += [f"  {x}" for x in [*probe_sentences(self.probes), *self.probe_notes]]
        out += [f"  {x}" for x in anchor_lines(self.anchors, "")]
        if d.refused:
            out.append("  rows not read: " + ", ".join(f"{k} {v}" for k, v in d.refused.items()))
        if self.mode != "open":
            out += [f"  {x}" for x in interval_legend(_paired(self))]
        out += [f"  {x}" for x in self.failure_sentences()]
        out.append(f"  results: {self.results}")
        if self.report:
            out.append(f"  report: {self.report} (leaderboard, plots; benchfoundry report RUN...)")
        return out

    def closing(self) -> list[str]:
        """The evaluation's place among the build's outputs."""
        d = self.dataset
        best = max(self.scores, key=lambda s: s.vanilla.accuracy, default=None)
        runs = len(self.scores) + len(self.open_scores)
        lines = [f"  evaluation: {runs} model runs on {d.name} {d.version or ''}".rstrip()]
        if best is not None:
            lines[0] += f" (best vanilla: {_label(best)} {best.vanilla.accuracy:.1%})"
        top = max(self.open_scores, key=lambda s: s.total.mean, default=None)
        if top is not None:
            lines[0] += f" (best: {_label(top)} {spread(top.total)})"
        lines.append(f"  results: {self.results}")
        if self.report:
            lines.append(f"  evaluation report: {self.report}")
        return lines


def _paired(summary: EvaluateSummary) -> bool:
    """Whether the summary shows paired differences (comparisons, language gaps)."""
    boards = summary.language_boards
    return bool(summary.comparisons or summary.language_gaps or any(b.comparisons for b in boards))


def _all_failed(s) -> int:
    """A score's failures on every language's board (its own board's where there is one)."""
    total = getattr(s, "failed_all_languages", None)
    return s.unanswered if total is None else total


def failed_cell(s: ModelScore) -> str:
    """`0`, or `5 (HTTP 400 5)`: questions with no answer, scored wrong, by reason; on a
    bilingual release's headline, the other languages' failures after it (`0; zh 20`)."""
    own = "0" if not s.failed else f"{s.failed} ({reasons_text(s.failed_by_reason)})"
    others = list(s.failed_by_language.items())[1:]  # the headline's language comes first
    return own + "".join(f"; {k} {v}" for k, v in others if v)


TABLE = ["model", "vanilla [95% CI]", "CircularEval [95% CI]", "failed", "refused",
         "calls sent (+ cached) of every pass", "rank range", "in build"]  # fmt: skip


def _table(rows: list[list[str]]) -> list[str]:
    """A board as a Markdown table."""
    return [
        "| " + " | ".join(TABLE) + " |",
        "|" + "---|" * len(TABLE),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def _board_of(d: DatasetInfo) -> str:
    """What the headline board holds, on a bilingual release."""
    if not d.headline:
        return ""
    counts = ", ".join(f"{k} {v}" for k, v in d.languages.items())
    if d.headline == POOLED:
        return f" ({POOLED}, as asked: {counts})"
    return f" in {d.headline}, the headline board; each language is its own board ({counts})"


def _board_lines(summary: EvaluateSummary, scores: list[ModelScore]) -> list[str]:
    return [
        f"  {row[0]:<44} vanilla {row[1]:<22} circular {row[2]:<22} refused {row[4]}"
        + (f" FAILED {row[3]}" if row[3] not in ("0", "-") else "")
        + (f" rank {row[6]}" if row[6] != "-" else "")
        + (f" in build: {row[7]}" if row[7] != "-" else "")
        for row in leaderboard(summary, scores)
    ]


def leaderboard(
    summary: EvaluateSummary, scores: list[ModelScore] | None = None
) -> list[list[str]]:
    """Rows of the board (the headline's, or `scores`: another language's), best first by the
    mode's metric, chance last."""
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
            failed_cell(s),
            f"{s.refusal_rate:.1%}",
            f"{s.calls_made}"
            + (f" (+{s.calls_cached} cached)" if s.calls_cached else "")
            + f" of {s.calls_if_every_pass}",
            s.rank,
            labels(s.in_build),
        ]
        for s in sorted(summary.scores if scores is None else scores, key=key, reverse=True)
    ]
    if summary.chance_vanilla is not None:
        rows.append(
            [
                "chance (uniform guess)",
                f"{summary.chance_vanilla:.1%}",
                f"{summary.chance_circular:.1%}"
                if summary.mode == "circular" and summary.chance_circular is not None
                else "-",
                "-",
                "-",
                "-",
                "-",
                "-",
            ]
        )
    return rows
