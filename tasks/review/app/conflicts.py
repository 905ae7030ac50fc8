"""The adjudicator's queue: the questions whose reviewers disagree, each with every person's
latest decision, the item as the desk shows it and its evidence overlay."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from benchfoundry.core.letters import LETTERS
from benchfoundry.decisions.outcomes import AUTO, outcome
from benchfoundry.decisions.reviews import medium_of
from benchfoundry.decisions.twins import language_of, twin_parts

if TYPE_CHECKING:
    from benchfoundry.tasks.review.app.data import ReviewData


def open_conflicts(data: ReviewData) -> list[dict[str, Any]]:
    """Questions in conflict, the longest waiting first (by the last person's decision), each
    with every person's latest decision and its evidence overlay."""
    current = data.store.latest()
    open_ = {q: by for q, by in current.items() if outcome(by)[0] == "conflict"}
    every = data.items()
    candidates = {q: every[q] for q in open_ if q in every}
    overlays = data.overlays(list(candidates.values()))
    out = []
    for qid, by in open_.items():
        if qid not in candidates:
            continue
        c = candidates[qid]
        people = [r for name, r in sorted(by.items()) if name != AUTO]
        out.append(
            {
                "question_id": qid,
                "image_id": c.image_id,
                "dimension": c.dimension,
                "hint": c.hint,
                "question": c.question,
                "options": [{"letter": LETTERS[i], "text": t} for i, t in enumerate(c.options)],
                "answer": c.answer,
                "evidence": list(c.evidence),
                "overlay": overlays[qid],
                "medium": medium_of(c),
                "since": max(r.decided_at for r in people),
                "language": language_of(c),
                "english": None
                if language_of(c) is None
                else {
                    "question_id": twin_parts(qid)[0],
                    "question": every[twin_parts(qid)[0]].question,
                },
                "decisions": [r.model_dump(mode="json") for r in people],
            }
        )
    return sorted(out, key=lambda c: (c["since"], c["question_id"]))
