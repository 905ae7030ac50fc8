"""What the evaluation did not ask again: answers replayed from the run's response cache.

The cache keys a call by what was asked (the model as it runs, the text or facts it is shown,
the options in their order, the prompt's version), so a question the build's filter or
consensus already put to the same model in the same words, or another setting of this
evaluation did (a fact reader asked without the image is its inner model's own call), is
answered from there: not sent, not charged, and counted apart on the board
(`calls sent (+ cached)`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol


class Calls(Protocol):
    calls_made: int  # sent to the model
    calls_cached: int  # replayed from the response cache


def reuse_sentence(scores: Iterable[Calls]) -> str | None:
    """One sentence on the answers replayed rather than asked, or None when none were."""
    scores = list(scores)
    sent = sum(s.calls_made for s in scores)
    cached = sum(s.calls_cached for s in scores)
    if not cached:
        return None
    return (
        f"answers reused: {cached:,} of {sent + cached:,} came from the response cache, asked "
        "already of the same model in the same words (by the build's filter or consensus, "
        f"another setting, or an earlier run): not asked again, not charged; {sent:,} sent"
    )
