"""Where a review stands: decisions, conflicts, agreement between reviewers (Cohen's kappa per
pair, Krippendorff's alpha), shared by the review commands and the release's provenance."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class PairAgreement(BaseModel):
    reviewers: list[str]
    items: int
    agreement: float | None
    kappa: float | None


class ReviewStatus(BaseModel):
    run: str
    batches: list[dict[str, Any]]  # batch id, reviewer, dimension, decided, total
    per_reviewer: dict[str, dict[str, int]]  # reviewer -> decided, total
    states: dict[str, int]  # decided, agreed, conflict, adjudicated, auto, undecided
    conflicts: list[str]  # question ids
    stale: list[str]  # decisions on a candidate that changed since: "question_id (reviewer)"
    pairs: list[PairAgreement]
    by_dimension: dict[str, PairAgreement]
    # "en" and each twin language: {"states": state -> items, "agreement": PairAgreement | None}
    by_language: dict[str, dict[str, Any]] = {}
    alpha: float | None
    alpha_items: int
    decisions: int
    auto_decisions: int
    report: str | None = None


STATES_LEGEND = (
    "(decided: one person's decision, nobody to agree with; agreed: two or more people made the "
    "same decision; conflict: people disagree; adjudicated: an adjudicator settled it; auto: the "
    "automatic reviewer only)"
)


def _value(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _language_lines(state: ReviewStatus) -> list[str]:
    """Per language, when twins are reviewed too: states and the agreement of people."""
    if set(state.by_language) <= {"en"}:
        return []
    lines = [
        "",
        "| language | states | items | raw agreement | Cohen's kappa |",
        "|---|---|---|---|---|",
    ]
    for language, entry in state.by_language.items():
        states = ", ".join(f"{k} {v}" for k, v in entry["states"].items()) or "-"
        pair = entry.get("agreement")
        if isinstance(pair, dict):
            pair = PairAgreement(**pair)
        items, raw, kappa = (pair.items, pair.agreement, pair.kappa) if pair else (0, None, None)
        lines.append(f"| {language} | {states} | {items} | {_value(raw)} | {_value(kappa)} |")
    return lines


def status_markdown(state: ReviewStatus) -> str:
    lines = [
        "# Review status",
        "",
        f"{state.decisions} decisions by people, {state.auto_decisions} by the automatic reviewer.",
        "",
        "States: " + (", ".join(f"{k} {v}" for k, v in state.states.items()) or "nothing yet"),
        "",
        STATES_LEGEND,
        "",
        "| reviewer | decided | of |",
        "|---|---|---|",
        *(
            f"| {k} | {v.get('decided', 0)} | {v.get('total', 0)} |"
            for k, v in state.per_reviewer.items()
        ),
        "",
        "| batch | reviewer | dimension | decided | of |",
        "|---|---|---|---|---|",
        *(
            f"| `{b['batch_id']}`{' (cross-check)' if b['cross_check'] else ''} | {b['reviewer']} | "
            f"{b['dimension']}{' (' + b['language'] + ')' if b.get('language') else ''} {b['part']} | {b['decided']} | {b['total']} |"
            for b in state.batches
        ),
        "",
        "## Agreement",
        "",
        "| reviewers | items | raw agreement | Cohen's kappa |",
        "|---|---|---|---|",
        *(
            f"| {' / '.join(p.reviewers)} | {p.items} | {_value(p.agreement)} | {_value(p.kappa)} |"
            for p in state.pairs
        ),
        "",
        "| dimension | items | raw agreement | Cohen's kappa |",
        "|---|---|---|---|",
        *(
            f"| {d} | {p.items} | {_value(p.agreement)} | {_value(p.kappa)} |"
            for d, p in state.by_dimension.items()
        ),
        *_language_lines(state),
        "",
        f"Krippendorff's alpha over all reviewers: {_value(state.alpha)} ({state.alpha_items} items "
        "decided by two or more)",
    ]
    if state.conflicts:
        lines += [
            "",
            "## Conflicts (an adjudicator decides)",
            "",
            *(f"- `{q}`" for q in state.conflicts),
        ]
    if state.stale:
        lines += [
            "",
            "## Decisions on candidates that changed since",
            "",
            *(f"- {s}" for s in state.stale),
        ]
    return "\n".join(lines) + "\n"
