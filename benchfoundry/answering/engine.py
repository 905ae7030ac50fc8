"""Asking models multiple-choice questions, vanilla or under CircularEval (MMBench).

Pass k presents the options rotated by k, the answer letter moving with them; a question counts
as right under CircularEval only if every pass is right. A question stops at its first wrong
pass, and passes run in waves over all questions (pass 0 for all, pass 1 for the survivors...)
so that early stopping does not cost parallelism.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from benchfoundry.answering.judge import ToExtract, extract_all
from benchfoundry.core.letters import LETTERS
from benchfoundry.core.records import JudgementRecord
from benchfoundry.gateway import (
    MCQ,
    Gateway,
    GenerateParams,
    ModelCallError,
    ModelConfigError,
    NotSupportedError,
    OptionScores,
    Request,
)
from benchfoundry.prompts import load, load_for


@dataclass(frozen=True)
class MCQItem:
    """A question as the engine asks it. `image` is an image id, bytes, a path, or None."""

    question_id: str
    question: str
    options: tuple[str, ...]
    answer: str
    hint: str | None = None
    image: Any = None
    category: str | None = None
    l2_category: str | None = None
    # A temporal question's clip: (bytes or a path, start, end in seconds); `image` is then the
    # keyframe that stands for it.
    video: tuple[Any, float, float] | None = None
    language: str = "en"  # the item's language: the prompt is in it (`mcq`, `mcq_zh`)


def item_messages(item: MCQItem, text: str, with_image: bool) -> list[dict[str, Any]]:
    """VLMEvalKit interleaved messages: the question's image or clip (when it is shown), then
    `text`. What of a clip a model sees (the clip, frames, the keyframe) the gateway decides
    per model."""
    if not with_image or item.image is None:
        return [{"type": "text", "value": text}]
    if item.video is not None:
        clip, start, end = item.video
        shown = {"type": "video", "value": clip, "start": start, "end": end, "keyframe": item.image}
    else:
        shown = {"type": "image", "value": item.image}
    return [shown, {"type": "text", "value": text}]


def rotation(n: int, k: int) -> list[int]:
    """Original option indices in the order pass k presents them."""
    return [(i + k) % n for i in range(n)]


@dataclass
class PassResult:
    question_id: str
    model: str
    pass_index: int
    option_order: list[str]  # original letters, in presented order
    prompt: str
    raw_response: str | None
    extracted: str | None  # letter in the presented order, or Z
    extracted_by: str
    correct: bool
    error: str | None = None  # the failure's message
    error_kind: str | None = None  # its kind (timeout, rate_limit, connection...)
    prompt_id: str | None = None
    prompt_hash: str | None = None

    def to_record(self, mode: str, with_image: bool) -> JudgementRecord:
        return JudgementRecord(
            question_id=self.question_id,
            model=self.model,
            mode=mode,
            with_image=with_image,
            pass_index=self.pass_index,
            option_order=self.option_order,
            prompt=self.prompt,
            raw_response=self.raw_response,
            extracted=self.extracted,
            extracted_by=self.extracted_by,
            correct=self.correct,
            prompt_id=self.prompt_id,
            prompt_hash=self.prompt_hash,
            error_kind=self.error_kind,
            error=self.error,
        )


@dataclass
class QuestionResult:
    item: MCQItem
    passes: list[PassResult] = field(default_factory=list)

    @property
    def vanilla_correct(self) -> bool:
        return bool(self.passes) and self.passes[0].correct

    @property
    def circular_correct(self) -> bool:
        return len(self.passes) == len(self.item.options) and all(p.correct for p in self.passes)


class EngineReport(BaseModel):
    """One model's run over a set of questions."""

    model: str
    sees: str
    with_image: bool
    circular: bool
    questions: int
    vanilla_accuracy: float
    circular_accuracy: float | None
    calls_made: int
    calls_if_every_pass: int
    extracted_by: dict[str, int]
    errors: dict[str, int]
    by_category: dict[str, dict[str, float]]


def mcq_templates() -> dict[str, Any]:
    """The multiple-choice prompt of each language an item may be in."""
    return {"en": load("mcq"), "zh": load_for("mcq", "zh")}


class AnsweringEngine:
    """Asks one model at a time, through the gateway, and reads its answers."""

    def __init__(
        self,
        gateway: Gateway,
        judge: str | None = None,
        judge_tries: int = 3,
        params: GenerateParams | None = None,
        with_image: bool = True,
    ) -> None:
        self.gateway = gateway
        self.judge = judge
        self.judge_tries = judge_tries
        self.templates = mcq_templates()  # by item language
        self.template = self.templates["en"]
        self.params = (params or GenerateParams(max_tokens=64)).model_copy(
            update={"prompt_version": self.template.prompt_id}
        )
        self.with_image = with_image

    def _request(self, item: MCQItem, model: str, k: int) -> tuple[Request, list[str], str]:
        order = rotation(len(item.options), k)
        shown = tuple(item.options[i] for i in order)
        template = self.templates.get(item.language, self.template)
        text = template.render(
            hint=item.hint, question=item.question, options=list(zip(LETTERS, shown, strict=False))
        )
        messages = item_messages(item, text, self.with_image)
        mcq = MCQ(question=item.question, options=shown, hint=item.hint)
        params = self.params.model_copy(update={"prompt_version": template.prompt_id})
        return Request(model, messages, params, mcq), [LETTERS[i] for i in order], text

    def answers_by_likelihood(self, model: str) -> bool:
        """Whether the catalogue says the model answers multiple-choice questions by ranking the
        options by likelihood (`options: {mcq: likelihood}`; small local models do far better
        that way than by writing a letter)."""
        return self.gateway.spec(model).options.get("mcq") == "likelihood"

    def run(
        self,
        items: Sequence[MCQItem],
        model: str,
        circular: bool = True,
        on_done: Callable[[int], None] | None = None,
    ) -> tuple[list[QuestionResult], EngineReport]:
        """Ask every question (every pass, under CircularEval, until the first wrong one).
        `on_done(n)` is told each time n more questions are finished."""
        done = on_done or (lambda n: None)
        if self.answers_by_likelihood(model):
            results = self._run_likelihood(items, model, circular, done)
            return results, self.report(results, model, circular)
        results = [QuestionResult(item) for item in items]
        alive = list(range(len(results)))
        wave = 0
        while alive:
            built = [self._request(results[i].item, model, wave) for i in alive]
            replies = self.gateway.generate_many([b[0] for b in built])
            texts = [None if isinstance(r, ModelCallError) else r.text for r in replies]
            extractions = extract_all(
                [
                    ToExtract(
                        results[i].item.question, b[0].mcq.options, t, results[i].item.language
                    )
                    for i, b, t in zip(alive, built, texts, strict=True)
                ],
                self.gateway,
                self.judge,
                self.judge_tries,
            )
            survivors = []
            for i, (_request, order, prompt), reply, extraction in zip(
                alive, built, replies, extractions, strict=True
            ):
                item = results[i].item
                made = self._pass(item, model, wave, order, prompt, reply, extraction)
                results[i].passes.append(made)
                if circular and made.correct and wave + 1 < len(item.options):
                    survivors.append(i)
            done(len(alive) - len(survivors))
            alive = survivors
            wave += 1
        return results, self.report(results, model, circular)

    def _pass(
        self,
        item: MCQItem,
        model: str,
        k: int,
        order: list[str],
        prompt: str,
        reply: Any,
        extraction: Any,
    ) -> PassResult:
        """Pass `k` of `item` from the model's reply (or its failure) and the choice read."""
        expected = LETTERS[order.index(item.answer)]
        failed = isinstance(reply, ModelCallError)
        error = reply.message if failed else None
        template = self.templates.get(item.language, self.template)
        return PassResult(
            question_id=item.question_id,
            model=model,
            pass_index=k,
            option_order=order,
            prompt=prompt,
            raw_response=None if failed else reply.text,
            extracted=None if failed else extraction.letter,
            extracted_by="none" if failed else extraction.by,
            correct=not failed and extraction.letter == expected,
            error=error,
            error_kind=reply.kind if failed else None,
            prompt_id=template.prompt_id,
            prompt_hash=template.version,
        )

    def ask(self, item: MCQItem, model: str, circular: bool = True) -> QuestionResult:
        """One question on its own, pass after pass (under CircularEval until the first wrong
        one), in the calling thread: a scheduler runs many questions side by side so that none
        waits for another's passes or retries (`tasks/evaluate/schedule.py`). A failed call
        ends the question."""
        result = QuestionResult(item)
        for k in range(len(item.options) if circular else 1):
            request, order, prompt = self._request(item, model, k)
            try:
                reply: Any = self.gateway.generate(
                    request.model, request.messages, request.params, request.mcq
                )
            except ModelCallError as exc:
                reply = exc
            text = None if isinstance(reply, ModelCallError) else reply.text
            (extraction,) = extract_all(
                [ToExtract(item.question, request.mcq.options, text, item.language)],
                self.gateway,
                self.judge,
                self.judge_tries,
            )
            made = self._pass(item, model, k, order, prompt, reply, extraction)
            result.passes.append(made)
            if not made.correct:
                break
        return result

    def _run_likelihood(
        self, items: Sequence[MCQItem], model: str, circular: bool, done: Callable[[int], None]
    ) -> list[QuestionResult]:
        """One likelihood ranking per question. The ranking does not depend on the order the
        options are shown in, so every CircularEval pass makes the same choice: the passes are
        recorded (until the first wrong one) from that one call."""
        templates = {lang: load_for("likelihood", lang) for lang in {i.language for i in items}}
        results: dict[int, QuestionResult] = {}
        # Questions about one image one after another, and scored together: a local model runs
        # the image's part of the prompt once for them. Results keep the given order.
        order = sorted(range(len(items)), key=lambda i: (str(items[i].image), i))
        # A call scores `score_batch` questions (a local model packs them into a few passes;
        # a GPU wants hundreds); the response cache keeps every call's answers.
        size = max(1, int(self.gateway.spec(model).options.get("score_batch", 64)))
        for chunk in (order[at : at + size] for at in range(0, len(order), size)):
            prompts = {
                i: templates[items[i].language].render(
                    hint=items[i].hint, question=items[i].question
                )
                for i in chunk
            }
            try:
                answers = self.gateway.score_options_many(
                    model,
                    [
                        (item_messages(items[i], prompts[i], self.with_image), items[i].options)
                        for i in chunk
                    ],
                )
            except NotSupportedError as exc:
                raise ModelConfigError(
                    f"model '{model}' is set to answer by likelihood (mcq: likelihood) but {exc}"
                ) from None
            for index, scores in zip(chunk, answers, strict=True):
                results[index] = self._ranked(
                    items[index],
                    model,
                    prompts[index],
                    scores,
                    circular,
                    templates[items[index].language],
                )
            done(len(chunk))
        return [results[i] for i in range(len(items))]

    @staticmethod
    def _ranked(
        item: MCQItem,
        model: str,
        prompt: str,
        scores: OptionScores | ModelCallError,
        circular: bool,
        template: Any,
    ) -> QuestionResult:
        """A question's passes from its one likelihood ranking (until the first wrong one)."""
        result = QuestionResult(item)
        if isinstance(scores, ModelCallError):
            chosen, error, error_kind, raw = None, scores.message, scores.kind, None
        else:
            chosen, error, error_kind = LETTERS[scores.best(normalised=True)], None, None
            raw = "log-likelihood per token: " + ", ".join(
                f"{LETTERS[i]} {v:.3f}" for i, v in enumerate(scores.normalised)
            )
        for k in range(len(item.options) if circular else 1):
            order = [LETTERS[i] for i in rotation(len(item.options), k)]
            correct = error is None and chosen == item.answer
            result.passes.append(
                PassResult(
                    question_id=item.question_id,
                    model=model,
                    pass_index=k,
                    option_order=order,
                    prompt=prompt,
                    raw_response=raw,
                    extracted=LETTERS[order.index(chosen)] if chosen else None,
                    extracted_by="likelihood" if error is None else "none",
                    correct=correct,
                    error=error,
                    error_kind=error_kind,
                    prompt_id=template.prompt_id,
                    prompt_hash=template.version,
                )
            )
            if not correct:
                break
        return result

    def report(self, results: Sequence[QuestionResult], model: str, circular: bool) -> EngineReport:
        n = max(1, len(results))
        passes = [p for r in results for p in r.passes]
        # A likelihood ranking answers every pass of its question with one call.
        by_likelihood = self.answers_by_likelihood(model)
        by_category: dict[str, dict[str, float]] = {}
        for category in sorted({r.item.category or "uncategorised" for r in results}):
            group = [r for r in results if (r.item.category or "uncategorised") == category]
            by_category[category] = {
                "questions": len(group),
                "vanilla": sum(r.vanilla_correct for r in group) / len(group),
            }
            if circular:
                by_category[category]["circular"] = sum(r.circular_correct for r in group) / len(
                    group
                )
        return EngineReport(
            model=model,
            sees=self.gateway.sees(model),
            with_image=self.with_image,
            circular=circular,
            questions=len(results),
            vanilla_accuracy=sum(r.vanilla_correct for r in results) / n,
            circular_accuracy=sum(r.circular_correct for r in results) / n if circular else None,
            # A likelihood ranking answers every pass of its question with one call.
            calls_made=len(results) if by_likelihood else len(passes),
            calls_if_every_pass=len(results)
            if by_likelihood or not circular
            else sum(len(r.item.options) for r in results),
            extracted_by=dict(Counter(p.extracted_by for p in passes if p.error is None)),
            errors=dict(Counter(p.error_kind or "error" for p in passes if p.error)),
            by_category=by_category,
        )
