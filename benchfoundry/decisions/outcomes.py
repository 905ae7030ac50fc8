"""What the decisions on an item come to: each reviewer's latest decision, the state they leave
the item in (decided, agreed, conflict, adjudicated...) with the decision that counts, the item
as a decision leaves it, and whether a twin was written before its English item changed in
review. The automatic reviewer, `auto`, is never counted as a person."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchfoundry.core.records import ReviewRecord

AUTO = "auto"  # the automatic reviewer: never counted as a person
CHANGES_ITEM = ("edit", "fix_answer")  # decisions that change an item's text or key


def verdict(r: ReviewRecord) -> tuple[Any, ...]:
    """What two reviewers must share to agree."""
    return (r.decision, r.new_answer, r.new_question, tuple(r.new_options or ()), r.new_dimension)


def latest(reviews: Iterable[ReviewRecord]) -> dict[str, dict[str, ReviewRecord]]:
    """question_id -> reviewer -> their latest decision (adjudications under their adjudicator)."""
    out: dict[str, dict[str, ReviewRecord]] = defaultdict(dict)
    for r in sorted(reviews, key=lambda r: r.decided_at):
        out[r.question_id][r.reviewer] = r
    return out


def outcome(decisions: Mapping[str, ReviewRecord]) -> tuple[str, ReviewRecord | None]:
    """(state, the decision that counts) for one question: `adjudicated`, `agreed` (two or more
    people made the same decision), `decided` (one person decided; nobody to agree with),
    `conflict`, `auto` (only the automatic reviewer decided) or `undecided`."""
    adjudications = [r for r in decisions.values() if r.adjudication]
    if adjudications:
        return "adjudicated", max(adjudications, key=lambda r: r.decided_at)
    people = [r for name, r in decisions.items() if name != AUTO]
    if people:
        if len({verdict(r) for r in people}) == 1:
            state = "agreed" if len(people) > 1 else "decided"
            return state, max(people, key=lambda r: r.decided_at)
        return "conflict", None
    if AUTO in decisions:
        return "auto", decisions[AUTO]
    return "undecided", None


@dataclass(frozen=True)
class Shown:
    """An item's text and key as a decision leaves them (an edit's text, a fixed key)."""

    question: str
    options: list[str]
    answer: str


def as_decided(
    question: str, options: Sequence[str], answer: str, decision: ReviewRecord | None
) -> Shown:
    """The text and key after `decision` (none, or one that changes neither: as they are)."""
    if decision is not None and decision.decision == "fix_answer" and decision.new_answer:
        return Shown(question, list(options), decision.new_answer)
    if decision is not None and decision.decision == "edit":
        return Shown(
            decision.new_question if decision.new_question is not None else question,
            list(decision.new_options) if decision.new_options is not None else list(options),
            decision.new_answer or answer,
        )
    return Shown(question, list(options), answer)


def english_change(decisions: Mapping[str, ReviewRecord]) -> ReviewRecord | None:
    """The decision that changed an English item's text or key in review, or None: the one that
    counts, or, while its reviewers disagree, the latest person's that would change it (a twin
    waits for the conflict to be settled rather than be accepted on text that may go)."""
    state, counting = outcome(decisions)
    if counting is not None:
        return counting if counting.decision in CHANGES_ITEM else None
    if state != "conflict":
        return None
    changing = [r for n, r in decisions.items() if n != AUTO and r.decision in CHANGES_ITEM]
    return max(changing, key=lambda r: r.decided_at, default=None)


def why_outdated(english_id: str, change: ReviewRecord) -> str:
    """Why a twin written before `change` to its English item cannot be accepted, and what to do."""
    what = "its key" if change.decision == "fix_answer" else "its text"
    return (
        f"the English item {english_id} changed in review after this twin was written "
        f"({change.reviewer} changed {what}): the twin cannot be accepted; write it again from "
        "the English item as it is now (edit its text), or reject it"
    )
