"""What the test server answers: a request as it understood it, and the script of replies
(rules by model and text, a sequence, a default; a rule may answer an HTTP error), and the
oracle that knows a run's keys. Kept apart from the HTTP serving in `testserver.py`."""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchfoundry.devtools.testserver_media import Media


@dataclass(frozen=True)
class ChatRequest:
    """What the server understood of one request."""

    model: str
    text: str
    system: str | None
    n_images: int  # image and video parts
    json_schema: dict[str, Any] | None
    body: dict[str, Any]
    media: tuple[Media, ...] = ()  # each image and clip, decoded (`testserver_media`)


@dataclass(frozen=True)
class Refusal:
    """A scripted answer that is an HTTP error: `status` with `message` (vLLM's 400 for too
    many images, say), for the requests a rule matches."""

    status: int
    message: str = "refused"


Reply = str | Refusal | Callable[[ChatRequest], str]


@dataclass
class Rule:
    """Answer `reply` when the model matches (if given) and the text matches (if given)."""

    reply: Reply
    model: str | None = None
    pattern: str | None = None

    def matches(self, request: ChatRequest) -> bool:
        if self.model is not None and request.model != self.model:
            return False
        return self.pattern is None or re.search(self.pattern, request.text, re.S) is not None


@dataclass
class Script:
    """Answers by rule (the first that matches), then from a sequence, then the default."""

    rules: list[Rule] = field(default_factory=list)
    sequence: list[str] = field(default_factory=list)
    default: Reply = "A"
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def reply(self, request: ChatRequest) -> str | Refusal:
        for rule in self.rules:
            if rule.matches(request):
                return rule.reply(request) if callable(rule.reply) else rule.reply
        with self._lock:
            if self.sequence:
                return self.sequence.pop(0)
        return self.default(request) if callable(self.default) else self.default

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Script:
        """From YAML/JSON: `{default: ..., sequence: [...], rules: [{model, pattern, reply}]}`;
        a rule with `status` (and `reply` as its message) answers that HTTP error."""
        rules = [
            Rule(
                reply=Refusal(int(r["status"]), str(r.get("reply", "refused")))
                if r.get("status")
                else r["reply"],
                model=r.get("model"),
                pattern=r.get("pattern"),
            )
            for r in raw.get("rules", [])
        ]
        return cls(
            rules=rules, sequence=list(raw.get("sequence", [])), default=raw.get("default", "A")
        )


class Oracle:
    """A vision-language model that knows the answers: it looks each question up among the run's
    candidates (by its text and options) and names the right option's letter in the order shown,
    so that questions pass consensus and review with no local model to run."""

    def __init__(self, run: str | Path | Sequence[str | Path]) -> None:
        # several runs of one corpus (builds side by side): a question is looked up in all
        self.runs = [run] if isinstance(run, str | Path) else list(run)
        self.known: dict[tuple[str, object], str] = {}

    def answer(self, text: str) -> str:
        """The right letter: found by the question and its options in the order shown (two
        images can share a question and its options with different keys: "What does the image
        contain?"), else by the options in any order (a rotation under CircularEval)."""
        question = re.search(r"^Question: (.*)$", text, re.M)
        shown = dict(re.findall(r"^([A-Z])\. (.*)$", text, re.M))
        if question is None or not shown:
            return "Z"
        asked = question.group(1).strip()
        ordered, unordered = (asked, tuple(shown.values())), (asked, frozenset(shown.values()))
        if unordered not in self.known:
            from benchfoundry.core.records import CandidateRecord
            from benchfoundry.storage.tables import RunFolder

            for run in self.runs:
                for c in RunFolder(run).table(CandidateRecord).records():
                    right = c.options["ABCDEFGHIJ".index(c.answer)]
                    self.known[(c.question.strip(), tuple(c.options))] = right
                    self.known[(c.question.strip(), frozenset(c.options))] = right
        right = self.known.get(ordered, self.known.get(unordered))
        return next((letter for letter, o in shown.items() if o == right), "Z")


class FirstCallFaults:
    """A soak's stand-in (a rule's reply): asked "Question K: ..." with options "K-right", ...,
    it answers the right option's letter (a wrong one when K % 10 == 9), except that the first
    call of some questions fails, chosen by a hash of K (not by image): `hang` of them (a share
    of 100) get no answer before the client gives up (`hang_s`), `http_500` get HTTP 500 and
    `http_429` HTTP 429; every later call is answered. `calls` counts each question's calls,
    `met` the faults acted out."""

    def __init__(
        self, hang_s: float, hang: int = 2, http_500: int = 5, http_429: int = 1, on: bool = True
    ) -> None:
        self.hang_s = hang_s
        self.shares = (hang, hang + http_500, hang + http_500 + http_429)
        self.on = on
        self.calls: Counter[int] = Counter()
        self.met: Counter[str] = Counter()
        self._lock = threading.Lock()

    def fault_of(self, k: int) -> str | None:
        """The fault question k's first call meets, if any."""
        share = int(hashlib.sha256(str(k).encode()).hexdigest(), 16) % 100
        hang, error, limited = self.shares
        if share < hang:
            return "hang"
        return "500" if share < error else "429" if share < limited else None

    @staticmethod
    def answer(text: str) -> str:
        k = int(text.split("Question ", 1)[1].split(":", 1)[0])
        wanted = f"{k}-right" if k % 10 != 9 else f"{k}-w1"
        lines = [line for line in text.splitlines() if line.endswith(f". {wanted}")]
        return lines[0].split(".", 1)[0].strip() if lines else "Z"

    def __call__(self, request: ChatRequest) -> str | Refusal:
        k = int(request.text.split("Question ", 1)[1].split(":", 1)[0])
        with self._lock:
            self.calls[k] += 1
            first = self.calls[k] == 1
        fault = self.fault_of(k) if self.on and first else None
        if fault is not None:
            with self._lock:
                self.met[fault] += 1
        if fault == "hang":
            time.sleep(self.hang_s)  # answered after the client gave up
        elif fault == "500":
            return Refusal(500, "internal server error")
        elif fault == "429":
            return Refusal(429, "too many requests")
        return self.answer(request.text)

    def report(self) -> dict[str, Any]:
        return {"calls": dict(self.calls), "met": dict(self.met)}
