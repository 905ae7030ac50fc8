"""Questions an evaluation could not get answered, and what they mean for a score.

A call that failed after the gateway's retries is not an answer, and never leaves the score's
denominator: the question is scored wrong (as VLMEvalKit and lmms-eval score it) and counted
under its reason, stored in `call_failures` so that a report made later says the same, and
asked again by the next run. A model whose calls keep being refused for reasons that are the
model's or the endpoint's (401, 403, 404), or that has answered nothing while refusing every
request (400s), is stopped instead of being asked every remaining question; what it was not
asked is counted as `not asked`."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from benchfoundry.core.records import CallFailureRecord

NOT_ASKED = "not asked"  # the model was stopped (or the run interrupted) before asking it
STOP_AFTER = 5  # refusals in a row that stop a model
_STATUS = re.compile(r"\bHTTP (\d{3})\b")
_ABOUT_THE_MODEL = {401, 403, 404}  # the key, the permission, the model name: every call fails
_MALFORMED = {"malformed_response", "empty_response", "malformed_reply"}


def reason_of(kind: str | None, message: str | None) -> str:
    """What a failure is counted as: `HTTP <status>`, `timeout`, `unreachable`,
    `malformed reply`, or the gateway's kind for anything else (a local model's error)."""
    if message and (found := _STATUS.search(message)):
        return f"HTTP {found.group(1)}"
    if kind == "rate_limited":
        return "HTTP 429"
    if kind == "timeout":
        return "timeout"
    if kind == "connection":
        return "unreachable"
    if kind in _MALFORMED:
        return "malformed reply"
    return kind or "error"


def status_of(reason: str) -> int | None:
    return int(reason[5:]) if reason.startswith("HTTP ") and reason[5:].isdigit() else None


def refused(reason: str) -> bool:
    """A failure no retry mends: an HTTP 4xx other than 408, 409 and 429."""
    status = status_of(reason)
    return status is not None and 400 <= status < 500 and status not in (408, 409, 429)


@dataclass
class Watch:
    """Decides when to stop asking a model: after `STOP_AFTER` refusals in a row about the
    model itself (401, 403, 404), or after as many refusals of any kind before it answered
    anything (a model that refuses some questions, vLLM's image limit say, goes on)."""

    answered: int = 0
    in_a_row: int = 0
    last: str | None = None
    stopped: str | None = None  # why, once stopped
    seen: Counter[str] = field(default_factory=Counter)

    def saw(self, reason: str | None) -> None:
        """One question's outcome: None for answered, else its failure's reason."""
        if reason is None:
            self.answered += 1
            self.in_a_row = 0
            return
        self.seen[reason] += 1
        if not refused(reason):
            self.in_a_row = 0
            return
        self.in_a_row = self.in_a_row + 1 if reason == self.last else 1
        self.last = reason
        about_model = status_of(reason) in _ABOUT_THE_MODEL
        if (
            self.stopped is None
            and self.in_a_row >= STOP_AFTER
            and (about_model or not self.answered)
        ):
            self.stopped = f"stopped after {self.in_a_row} calls in a row refused with {reason}"


def records(
    run_id: str, model: str, failed: Iterable[tuple[str, str, str]]
) -> list[CallFailureRecord]:
    """(question id, reason, detail) as rows of `call_failures`, stamped now."""
    at = datetime.now(UTC).isoformat(timespec="microseconds")
    return [
        CallFailureRecord(
            run_id=run_id, model=model, question_id=q, at=at, reason=reason, detail=detail[:500]
        )
        for q, reason, detail in failed
    ]


def latest_reasons(rows: Sequence[CallFailureRecord], run_id: str, model: str) -> dict[str, str]:
    """question id -> the reason of its newest failure, for one job."""
    newest: dict[str, CallFailureRecord] = {}
    for r in rows:
        mine = r.run_id == run_id and r.model == model
        if mine and (r.question_id not in newest or r.at > newest[r.question_id].at):
            newest[r.question_id] = r
    return {q: r.reason for q, r in newest.items()}


def reasons_text(by_reason: dict[str, int]) -> str:
    """`HTTP 400 5, timeout 1`: the reasons, most frequent first."""
    return ", ".join(f"{k} {v}" for k, v in sorted(by_reason.items(), key=lambda kv: -kv[1]))
