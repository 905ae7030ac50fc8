"""Open-ended questions (MM-Vet): a model answers in free text, an LLM grader scores the answer
against the ground truth with MM-Vet's few-shot scheme (`prompts/mmvet_grader.j2`: short and
long answers, fully right, wrong and partly right), k times.

The k gradings of one answer are k separate calls told apart by their seed, so the cache keeps
each and a rerun replays all k instead of collapsing them into one. A grade is read strictly: a
number in [0, 1] at the start of the reply. Any other reply is asked again with the follow-up
instruction (`prompts/mmvet_grader_followup.j2`, quoting the reply), the temperature raised by
0.5 a try as MM-Vet does; after the last try the grading is recorded as failed with the raw
replies and the reason, never as a silent 0. A grader call that fails outright (after the
gateway's own retries) is left ungraded, and asked again on the next run."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from benchfoundry.answering.engine import item_messages
from benchfoundry.core.text import text_language
from benchfoundry.gateway import Gateway, GenerateParams, ModelCallError, Request, Response
from benchfoundry.prompts import load, load_for

_NUMBER = re.compile(r"^\s*\**\s*([+-]?(?:\d+(?:\.\d+)?|\.\d+))")
_AFTER = set(" \t\r\n.,;:!)*|/")  # what may follow the number


def parse_grade(reply: str | None) -> tuple[float | None, str | None]:
    """(score, None) for a reply that starts with a number in [0, 1]; else (None, why not)."""
    text = (reply or "").strip()
    if not text:
        return None, "empty reply"
    match = _NUMBER.match(text)
    after = text[match.end() : match.end() + 1] if match else ""
    if match is None or (after and after not in _AFTER):
        return None, "no score at the start of the reply"
    value = float(match.group(1))
    if not 0.0 <= value <= 1.0:
        return None, f"score {match.group(1)} outside [0, 1]"
    return value, None


@dataclass(frozen=True)
class ToGrade:
    question: str
    truth: str  # the ground truth, with <AND> / <OR>
    answer: str  # the model's answer
    grading: int  # which of the k gradings


@dataclass
class Grade:
    grading: int
    score: float | None
    reply: str | None  # the grader's last reply
    tries: int
    error: str | None = None  # why there is no score: each try's reply and what was wrong
    call_failed: bool = False  # the call itself failed: not recorded, asked again next run


class OpenEngine:
    """Asks a model open-ended questions and has a grader score the answers."""

    def __init__(
        self,
        gateway: Gateway,
        grader: str,
        tries: int = 3,
        with_image: bool = True,
        max_answer_tokens: int = 512,
        languages: Sequence[str] = ("en",),
    ) -> None:
        self.gateway = gateway
        self.grader = grader
        self.tries = tries
        self.with_image = with_image
        self.answer_template = load("open_answer")
        # A question is graded in its language (`text_language`): a Chinese one with the
        # Chinese form of the scheme, where the set has Chinese questions.
        self.languages = sorted(set(languages) | {"en"})
        self.graders = {lang: load_for("mmvet_grader", lang) for lang in self.languages}
        self.followups = {lang: load_for("mmvet_grader_followup", lang) for lang in self.languages}
        self.answer_params = GenerateParams(
            max_tokens=max_answer_tokens, prompt_version=self.answer_template.prompt_id
        )

    @property
    def prompt_ids(self) -> list[str]:
        others = [self.graders[lang].prompt_id for lang in self.languages if lang != "en"]
        return [self.answer_template.prompt_id, self.graders["en"].prompt_id, *others]

    def _language(self, job: ToGrade) -> str:
        language = text_language(job.question)
        return language if language in self.graders else "en"

    def answer(
        self, questions: Sequence[tuple[str, object]], model: str
    ) -> list[Response | ModelCallError]:
        """The model's answers to (question, image) pairs, in order."""
        from benchfoundry.answering.engine import MCQItem

        requests = []
        for question, image in questions:
            text = self.answer_template.render(question=question)
            item = MCQItem(question_id="", question=question, options=(), answer="", image=image)
            requests.append(
                Request(model, item_messages(item, text, self.with_image), self.answer_params)
            )
        return self.gateway.generate_many(requests)

    def _prompt(self, job: ToGrade) -> str:
        truth = job.truth.replace("<AND>", " <AND> ").replace("<OR>", " <OR> ")
        return self.graders[self._language(job)].render(
            question=job.question, truth=" ".join(truth.split()), answer=job.answer
        )

    def grade(self, jobs: Sequence[ToGrade]) -> tuple[list[Grade], int]:
        """Every job's grade, in order, and the grader calls made (retries included)."""
        grades: list[Grade | None] = [None] * len(jobs)
        seen: list[list[str]] = [[] for _ in jobs]  # each try's reply and what was wrong
        last: list[str | None] = [None] * len(jobs)
        pending = list(range(len(jobs)))
        calls = 0
        for attempt in range(self.tries):
            if not pending:
                break
            requests = []
            for i in pending:
                prompt = self._prompt(jobs[i])
                template = self.graders[self._language(jobs[i])]
                if attempt:
                    template = self.followups[self._language(jobs[i])]
                    prompt = template.render(grading=prompt, reply=last[i] or "(empty)")
                params = GenerateParams(
                    max_tokens=16,
                    temperature=min(1.0, 0.5 * attempt),
                    seed=jobs[i].grading,
                    prompt_version=template.prompt_id,
                )
                requests.append(Request(self.grader, prompt, params))
            calls += len(requests)
            still = []
            for i, reply in zip(pending, self.gateway.generate_many(requests), strict=True):
                if isinstance(reply, ModelCallError):
                    grades[i] = Grade(
                        jobs[i].grading, None, None, attempt + 1, reply.message, call_failed=True
                    )
                    continue
                value, why = parse_grade(reply.text)
                if value is not None:
                    grades[i] = Grade(jobs[i].grading, value, reply.text, attempt + 1)
                    continue
                last[i] = reply.text
                seen[i].append(f"try {attempt + 1}: {why}: {reply.text!r}")
                still.append(i)
            pending = still
        for i in pending:
            grades[i] = Grade(jobs[i].grading, None, last[i], self.tries, "; ".join(seen[i]))
        return [g for g in grades if g is not None], calls
