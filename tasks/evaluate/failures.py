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
SERVER_FAILING = "not asked: server failing"  # cut short by the breaker (every call failed)
STOP_AFTER = 5  # refusals in a row that stop a model
_STATUS = re.compile(r"\bHTTP (\d{3})\b")
_ABOUT_THE_MODEL = {401, 403, 404}  # the key, the permission, the model name: every call fails
_MALFORMED = {"malformed_response", "empty_response", "malformed_reply"}


def reason_of(kind: str | None, message: str | None) -> str:
    """What a failure is counted as: `HTTP <status>`, `timeout`, `unreachable`,
    `malformed reply`, or the gateway's kind for anything else (a local model's error)."""
    if kind == "server_failing":  # the breaker refused the call: no request was sent
        return SERVER_FAILING
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
    """Decides when to stop asking a model for its refusals: after `STOP_AFTER` refusals in a
    row about the model itself (401, 403, 404: the key, the permission, the model name), or,
    before it answered anything, after the same refusal of `STOP_AFTER` distinct images (every
    request refused the same way). A refusal about one question (vLLM's image limit, a context
    limit) never stops a model, nor do the refusals of one image's questions (a clip's English
    and Chinese questions come together): what decides is how many distinct images were
    refused, not how many neighbouring calls. A server that fails (5xx, timeouts) is cut short
    by the gateway's breaker instead (`benchfoundry/gateway/breaker.py`)."""

    answered: int = 0
    in_a_row: int = 0
    last: str | None = None
    stopped: str | None = None  # why, once stopped
    seen: Counter[str] = field(default_factory=Counter)
    refused_images: dict[tuple[str, str], set[str]] = field(default_factory=dict)

    def saw(self, reason: str | None, image: str | None = None, message: str | None = None) -> None:
        """One question's outcome: None for answered, else its failure's reason, what the
        question showed (its image, or the question itself without one) and the server's
        message."""
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
        if self.stopped is not None:
            return
        if status_of(reason) in _ABOUT_THE_MODEL:
            if self.in_a_row >= STOP_AFTER:
                self.stopped = f"stopped after {self.in_a_row} calls in a row refused with {reason}"
            return
        if self.answered or about_one_question(message):
            return
        images = self.refused_images.setdefault((reason, message or ""), set())
        images.add(image or str(len(images)))
        if len(images) >= STOP_AFTER:
            self.stopped = (
                f"stopped: the questions of {len(images)} distinct images were all refused "
                f"with {reason} ({(message or '')[:120]}) and none was answered"
            )


# Refusals about one request's content, which other questions need not share.
_ONE_QUESTION = re.compile(
    r"at most \d+ (image|video)|image\(s\)|too many (images|videos|tokens)|context length|"
    r"maximum context|context window|too long|prompt is too|exceeds? the (maximum|limit)",
    re.I,
)


def about_one_question(message: str | None) -> bool:
    """Whether a refusal's message is about the request's content (an image limit, a context
    limit): it says nothing of the questions that do not share it."""
    return bool(message) and _ONE_QUESTION.search(message or "") is not None


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
