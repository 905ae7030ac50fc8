"""What the quality-control steps report: per-model hit rates, calls, decisions with reasons,
hit histograms, difficulty per dimension and the selection against its targets."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel

from benchfoundry.answering.engine import EngineReport
from benchfoundry.core.letters import LETTERS
from benchfoundry.core.records import CandidateRecord, ScoredRecord
from benchfoundry.core.summary import StageSummary
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.qc.select import Assessed, DimensionSelection


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _model_rows(models: list[ModelHits]) -> list[str]:
    rows = [
        "| model | sees | role | counted | questions | right (first pass) | right (circular) "
        "| calls | calls if every pass | errors |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for m in models:
        errors = ", ".join(f"{k} {n}" for k, n in m.errors.items()) or "-"
        rows.append(
            f"| {m.model} | {m.sees} | {m.role} | {'yes' if m.counted else 'no'} | {m.questions} "
            f"| {pct(m.vanilla_accuracy)} | {pct(m.circular_accuracy)} | {m.calls_made} | {m.calls_if_every_pass} "
            f"| {errors} |"
        )
    return rows


class ModelHits(EngineReport):
    """One model's run over the candidates in one step, with its place in the ensemble."""

    role: str  # text_only, blind, chance or vlm
    counted: bool  # counted in the ensemble's hits (chance baselines are not)


class AskSummary(StageSummary):
    """The filter or consensus step."""

    step: str
    run: str
    candidates: int
    skipped_refused: int
    skipped_dropped: int = 0  # consensus: dropped by the text-only step, not asked
    models: list[ModelHits]
    calls_made: int
    calls_if_every_pass: int
    calls_cached: int
    seconds: float

    def markdown_lines(self) -> list[str]:
        what = (
            "Text-only ensemble, asked without the image"
            if self.step == "filter"
            else "Vision-language ensemble, asked with the image"
        )
        return [
            f"## {self.step}: {what}",
            "",
            f"{self.candidates} candidates ({self.skipped_refused} refused at generation"
            + (
                f" and {self.skipped_dropped} dropped by the text-only step"
                if self.skipped_dropped
                else ""
            )
            + f" were not asked); {self.calls_made} calls where asking every pass would take "
            f"{self.calls_if_every_pass}; {self.calls_cached} answered from the cache; "
            f"{self.seconds:.1f} s.",
            "",
            *_model_rows(self.models),
            "",
        ]

    def markdown(self) -> str:
        return "\n".join(self.markdown_lines())

    def lines(self) -> list[str]:
        """The step's lines in the build's closing report."""
        title = (
            "Filter (text-only, no image)" if self.step == "filter" else "Consensus (with image)"
        )
        out = [
            "",
            f"{title}: {self.candidates} candidates"
            + (
                f" ({self.skipped_dropped} dropped by the filter not asked)"
                if self.skipped_dropped
                else ""
            )
            + f", {self.calls_made} calls "
            f"(every pass would be {self.calls_if_every_pass}; {self.calls_cached} from the cache)",
        ]
        name_width = max([16, *(len(m.model) for m in self.models)])
        sees_width = max([7, *(len(m.sees) for m in self.models)])  # `facts: objects`
        for m in self.models:
            tag = "" if m.counted else ", reported only"
            errors = f", errors {sum(m.errors.values())}" if m.errors else ""
            out.append(
                f"  {m.model:<{name_width}} sees {m.sees:<{sees_width}} {m.role}{tag}: right "
                f"{pct(m.vanilla_accuracy)} first pass, {pct(m.circular_accuracy)} circular{errors}"
            )
        return out


class DecisionExample(BaseModel):
    question_id: str
    dimension: str
    question: str
    options: list[str]
    answer: str
    decision: str
    reason: str


class SelectSummary(StageSummary):
    """The select step: every candidate's decision, and what the selection holds."""

    run: str
    candidates: int
    text_models: list[str]
    vlm_models: list[str]
    decisions: dict[str, int]
    reasons: dict[str, int]  # decision:code -> count
    flags: dict[str, int]
    text_hit_histogram: dict[str, int]  # hits -> candidates (all assessed candidates)
    vlm_hit_histogram: dict[str, int]
    difficulty_by_dimension: dict[str, dict[str, int]]
    difficulty_bins: list[str]  # hardest first
    dimensions: list[DimensionSelection]
    selected: int
    letters_selected: dict[str, int]
    llm_hit_rate_selected: float | None  # share of the selection hit by > half the text models
    text_accuracy_selected: dict[str, float]  # each text-only LLM (no baselines) on the selection
    blind_hit_rates: dict[str, float]  # artefact and chance baselines, over assessed candidates
    examples: list[DecisionExample]
    warnings: list[str] = []
    report: str | None = None
    plot: str | None = None
    # template items the evidence reader confirmed, read otherwise (flagged), or did not answer
    evidence: dict[str, int] = {}
    # the template items each of the flag's votes flagged: reader_only, models_only, both
    votes: dict[str, int] = {}

    def evidence_line(self) -> str | None:
        if not self.evidence:
            return None
        e = self.evidence
        v = self.votes
        votes = (
            f"; flagged possibly flawed by the reader alone {v.get('reader_only', 0)}, by the "
            f"models alone {v.get('models_only', 0)}, by both {v.get('both', 0)} (two votes: "
            "neither clears the other)"
            if v
            else ""
        )
        return (
            f"evidence reader on {sum(e.values())} template items: key confirmed "
            f"{e.get('confirmed', 0)}, read otherwise {e.get('read_otherwise', 0)}, not "
            f"answered {e.get('not_answered', 0)}{votes}"
        )

    def markdown_lines(self) -> list[str]:
        lines = [
            "## select: decisions",
            "",
            *[f"- **Note:** {w}" for w in self.warnings],
            *([""] if self.warnings else []),
            *([f"- {self.evidence_line()}", ""] if self.evidence else []),
            f"{self.candidates} candidates; text-only models counted: "
            f"{', '.join(self.text_models) or 'none'}; vision-language models: "
            f"{', '.join(self.vlm_models) or 'none'}.",
            "",
            "| decision | candidates |",
            "|---|---|",
            *[f"| {k} | {v} |" for k, v in self.decisions.items()],
            "",
            "| decision:reason | candidates |",
            "|---|---|",
            *[f"| {k} | {v} |" for k, v in self.reasons.items()],
            "",
            "Baselines without the image (share right on the first pass; `longest` and `similar` "
            "measure leakage in the options, the others the chance floor): "
            + (", ".join(f"{k} {pct(v)}" for k, v in self.blind_hit_rates.items()) or "none"),
            "",
            "| dimension | candidates | eligible | target | selected | shortfall | held back | letters "
            "| difficulty of the selection |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for d in self.dimensions:
            held = ", ".join(f"{k} {n}" for k, n in d.held_back.items()) or "-"
            letters = ", ".join(f"{k} {n}" for k, n in d.letters.items()) or "-"
            difficulty = ", ".join(f"{k} {n}" for k, n in d.difficulty.items()) or "-"
            lines.append(
                f"| {d.dimension} | {d.candidates} | {d.eligible} | {d.target} | {d.selected} "
                f"| {d.shortfall} | {held} | {letters} | {difficulty} |"
            )
        lines += [
            "",
            f"Selected {self.selected}; answer letters "
            + (", ".join(f"{k} {n}" for k, n in self.letters_selected.items()) or "-")
            + f"; LLM hit rate of the selection (hit by more than half the text-only models): "
            f"{pct(self.llm_hit_rate_selected)}; each text-only LLM right on the selection "
            "without the image: "
            + (", ".join(f"{k} {pct(v)}" for k, v in self.text_accuracy_selected.items()) or "-")
            + ".",
            "",
            "Text-only hits per candidate: "
            + ", ".join(f"{k}: {n}" for k, n in self.text_hit_histogram.items()),
            "",
            "Vision-language hits per candidate: "
            + ", ".join(f"{k}: {n}" for k, n in self.vlm_hit_histogram.items()),
            "",
            "### Examples",
            "",
        ]
        for ex in self.examples:
            options = "; ".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(ex.options))
            lines.append(
                f"- **{ex.decision}** [{ex.dimension}] {ex.question} ({options}; answer {ex.answer}) "
                f"— {ex.reason}"
            )
        return lines + [""]

    def markdown(self) -> str:
        return "\n".join(self.markdown_lines())

    def build_markdown(self) -> list[str]:
        lines = ["", "## Quality control", ""]
        lines += ["- decisions: " + ", ".join(f"`{k}` {v}" for k, v in self.decisions.items())]
        lines += [
            f"- {d.dimension}: selected {d.selected} of {d.target}"
            + (f" (short by {d.shortfall})" if d.shortfall else "")
            for d in self.dimensions
        ]
        return lines + [f"- report: `{self.report}`, plots: `{self.plot}`"]

    def lines(self) -> list[str]:
        """The step's lines in the build's closing report."""
        s = self
        out = [
            "",
            "Select: " + ", ".join(f"{k} {v}" for k, v in s.decisions.items()),
            "  reasons: " + ", ".join(f"{k} {v}" for k, v in s.reasons.items()),
        ]
        for d in s.dimensions:
            short = f", short by {d.shortfall}" if d.shortfall else ""
            out.append(
                f"  {d.dimension:<22} selected {d.selected:>4} of target {d.target} "
                f"({d.eligible} eligible of {d.candidates}){short}"
            )
        out.append(
            "  answer letters of the selection: "
            + (", ".join(f"{k} {n}" for k, n in s.letters_selected.items()) or "-")
            + f"; LLM hit rate {pct(s.llm_hit_rate_selected)}"
            + "".join(
                f"; {k} right without the image {pct(v)}"
                for k, v in s.text_accuracy_selected.items()
            )
        )
        out += [f"  note: {w}" for w in s.warnings]
        if s.evidence:
            out.append(f"  {s.evidence_line()}")
        if s.report:
            out.append(f"  report: {s.report}")
        if s.plot:
            out.append(f"  plots:  {s.plot}")
        return out


def _histogram(values: list[int]) -> dict[str, int]:
    counts = Counter(values)
    return {str(k): counts[k] for k in range(0, max(values, default=-1) + 1)}


def _accuracy(chosen: Sequence[Assessed], models: Sequence[str]) -> dict[str, float]:
    """Each model's share right on the first pass over the chosen candidates it answered."""
    out = {}
    for model in models:
        answered = [
            i
            for i in chosen
            if i.text is not None
            and model not in i.text.missing
            and not any(f.startswith(f"{model}: ") for f in i.text.failed)
        ]
        if answered:
            out[model] = round(sum(model in i.text.hit_by for i in answered) / len(answered), 4)
    return out


def summarise(
    run: RunFolder,
    candidates: Sequence[CandidateRecord],
    items: Sequence[Assessed],
    records: Sequence[ScoredRecord],
    dimensions: list[DimensionSelection],
    text_models: list[str],
    vlm_models: list[str],
    baseline_rates: dict[str, float],
    refused_codes: Counter[str],
    bins: list[str],
    text_llms: Sequence[str] = (),
    n_examples: int = 2,
) -> SelectSummary:
    """The select step's figures, from its decisions."""
    decisions = Counter(r.decision for r in records)
    codes = Counter(f"{i.decision}:{i.code}" for i in items)
    codes.update(refused_codes)
    flags = Counter(f for r in records for f in r.flags)
    text_assessed = [i.text.vanilla for i in items if i.text is not None and i.text.answered]
    vlm_assessed = [i.vlm.vanilla for i in items if i.vlm is not None and i.vlm.answered]
    difficulty: dict[str, Counter[str]] = {}
    for item in items:
        if item.verdict.difficulty is not None:
            difficulty.setdefault(item.dimension, Counter())[item.verdict.difficulty] += 1
    chosen = [i for i in items if i.decision == "selected"]
    with_text = [i for i in chosen if i.text is not None and i.text.answered]
    by_id = {c.question_id: c for c in candidates}
    examples = []
    for decision in ("selected", "held_back", "dropped", "flagged", "unassessed", "refused"):
        picked = sorted(
            (r for r in records if r.decision == decision),
            key=lambda r: (r.rank if r.rank is not None else 10**9, r.question_id),
        )[:n_examples]
        for r in picked:
            c = by_id[r.question_id]
            examples.append(
                DecisionExample(
                    question_id=r.question_id,
                    dimension=r.dimension,
                    question=c.question,
                    options=c.options,
                    answer=c.answer,
                    decision=r.decision,
                    reason=r.reason,
                )
            )
    return SelectSummary(
        run=str(run.root),
        candidates=len(candidates),
        text_models=text_models,
        vlm_models=vlm_models,
        decisions=dict(sorted(decisions.items())),
        reasons=dict(sorted(codes.items())),
        flags=dict(sorted(flags.items())),
        text_hit_histogram=_histogram(text_assessed),
        vlm_hit_histogram=_histogram(vlm_assessed),
        difficulty_by_dimension={
            d: {b: c[b] for b in bins if c[b]} for d, c in sorted(difficulty.items())
        },
        difficulty_bins=bins,
        dimensions=dimensions,
        selected=len(chosen),
        letters_selected=dict(sorted(Counter(i.answer for i in chosen).items())),
        llm_hit_rate_selected=round(
            sum(i.text.vanilla > i.text.answered / 2 for i in with_text) / len(with_text), 4
        )
        if with_text
        else None,
        text_accuracy_selected=_accuracy(chosen, text_llms),
        blind_hit_rates=baseline_rates,
        examples=examples,
    )


class QCSummary(BaseModel):
    """The steps of quality control that ran, and where their report is."""

    run: str
    steps: list[str]
    filter: AskSummary | None = None
    consensus: AskSummary | None = None
    select: SelectSummary | None = None
    report: str
