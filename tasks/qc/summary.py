"""What the quality-control steps report: per-model hit rates, calls, decisions with reasons,
hit histograms, difficulty per dimension and the selection against its targets."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from benchfoundry.tasks.qc.select import Assessed, DimensionSelection
from pydantic import BaseModel

from benchfoundry.answering.engine import EngineReport
from benchfoundry.core.records import CandidateRecord, ScoredRecord
from benchfoundry.storage.tables import RunFolder


class ModelHits(EngineReport):
    """One model's run over the candidates in one step, with its place in the ensemble."""

    role: str  # text_only, blind, chance or vlm
    counted: bool  # counted in the ensemble's hits (chance baselines are not)


class AskSummary(BaseModel):
    """The filter or consensus step."""

    step: str
    run: str
    candidates: int
    skipped_refused: int
    models: list[ModelHits]
    calls_made: int
    calls_if_every_pass: int
    calls_cached: int
    seconds: float


class DecisionExample(BaseModel):
    question_id: str
    dimension: str
    question: str
    options: list[str]
    answer: str
    decision: str
    reason: str


class SelectSummary(BaseModel):
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
