"""Question drafts, their validation, and how a valid draft becomes a candidate.

A draft holds the correct option's text and the distractors; the answer letter is chosen when
the candidate is made: a hash of the draft picks the correct option's position, so letters are
uniform across a set (in expectation) and a draft gets the same letter in every run, which keeps
question ids stable when a build grows."""

from __future__ import annotations

import difflib
import random
import re
from collections import Counter
from dataclasses import dataclass, field

from benchfoundry.core.ids import content_hash, question_id
from benchfoundry.core.letters import LETTERS
from benchfoundry.core.reasons import Rejection, register
from benchfoundry.core.records import CandidateRecord
from benchfoundry.core.text import width

REASONS = register(
    "generate",
    {
        "malformed_output": "the model's output is not the asked JSON, even after one repair attempt",
        "too_few_options": "fewer options than the minimum",
        "too_many_options": "more options than the maximum",
        "empty_option": "an option is empty",
        "duplicate_options": "two options say the same",
        "catch_all_option": "an option is 'all/none of the above'",
        "answer_in_question": "the correct option's text stands verbatim in the question",
        "empty_question": "the question is empty",
        "unknown_dimension": "the dimension is not one of the taxonomy's",
        "near_duplicate": "a question on the same image that says nearly the same as one kept",
        "model_failed": "the generator model failed (after its retries)",
    },
)


@dataclass
class Draft:
    image_id: str
    dimension: str
    question: str
    correct: str
    distractors: list[str]
    generator: str
    prompt_id: str | None = None
    prompt_hash: str | None = None
    evidence: list[str] = field(default_factory=list)
    raw_output: str | None = None
    cost: float = 0.0
    meta: dict[str, str] = field(default_factory=dict)  # a clip's question: its video and stretch
    # A template's parts (`benchfoundry.meaning`): the question's, and each option's, the correct
    # option's first, then the distractors' in their order; empty for other drafts.
    slots: dict[str, str] = field(default_factory=dict)
    option_slots: list[dict[str, str]] = field(default_factory=list)

    @property
    def source(self) -> str:
        if "video" in self.meta:
            return f"video:{self.meta['video']}@{self.meta['start']}-{self.meta['end']}#{self.dimension}"
        return f"image:{self.image_id}#{self.dimension}"

    def reject(self, reason: str, detail: str) -> Rejection:
        if self.raw_output is not None:  # an LLM's draft: keep what it wrote
            detail = f"{detail}; raw output: {self.raw_output[:2000]}"
        return Rejection(
            self.source,
            self.generator,
            reason,
            detail,
            stage="generate",
            ref_kind="draft",
            ref_id=self.image_id,
            dimension=self.dimension,
        )


@dataclass(frozen=True)
class Rules:
    min_options: int = 2
    max_options: int = 4
    length_ratio: float = 3.0  # an option longer than this many times the median is flagged
    near_duplicate: float = 0.95  # question similarity above which a second question is merged


_CATCH_ALL = re.compile(
    r"\b(all|none|both|neither) (of )?(the|these|those) (above|options|answers|choices)\b"
    r"|\b(all|none|both|neither) of (these|those|them)\b|^\s*(none|all|both)\s*\.?\s*$"
    r"|\bboth [a-j] and [a-j]\b",
    re.I,
)


def _same(a: str, b: str) -> bool:
    """Two options that say the same: equal ignoring case and spacing, or equal numbers."""
    if re.sub(r"\s+", " ", a.casefold()).strip() == re.sub(r"\s+", " ", b.casefold()).strip():
        return True
    try:
        return float(a.strip().rstrip(".")) == float(b.strip().rstrip("."))
    except ValueError:
        return False


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", text.casefold())).strip()


def validate(draft: Draft, rules: Rules, dimensions: set[str]) -> Rejection | None:
    """The first reason the draft is refused, or None."""
    options = [draft.correct, *draft.distractors]
    if not draft.question.strip():
        return draft.reject("empty_question", "the question is empty")
    if draft.dimension not in dimensions:
        return draft.reject("unknown_dimension", f"'{draft.dimension}' is not in the taxonomy")
    if len(options) < rules.min_options:
        return draft.reject(
            "too_few_options", f"{len(options)} options, at least {rules.min_options}"
        )
    if len(options) > rules.max_options:
        return draft.reject(
            "too_many_options", f"{len(options)} options, at most {rules.max_options}"
        )
    if any(not o.strip() for o in options):
        return draft.reject("empty_option", "an option is empty")
    if any(_same(a, b) for i, a in enumerate(options) for b in options[i + 1 :]):
        return draft.reject("duplicate_options", f"options repeat: {options}")
    catch_all = next((o for o in options if _CATCH_ALL.search(o)), None)
    if catch_all:
        return draft.reject("catch_all_option", f"option '{catch_all}'")
    correct = _norm(draft.correct)
    question = _norm(draft.question)
    listed = all(
        re.search(rf"(?<!\w){re.escape(_norm(o))}(?!\w)", question) for o in options
    )  # "left or right?"
    if (
        len(correct) >= 3
        and not listed
        and re.search(rf"(?<!\w){re.escape(correct)}(?!\w)", question)
    ):
        return draft.reject("answer_in_question", f"'{draft.correct}' stands in the question")
    return None


def length_flags(options: list[str], ratio: float) -> list[str]:
    """`length_outlier` when one option is much longer than the others (a cue that leaks);
    lengths by display width, so that Chinese options compare as English ones do."""
    lengths = sorted(width(o) for o in options)
    median = lengths[len(lengths) // 2]
    return ["length_outlier"] if median and lengths[-1] > ratio * median else []


def merge_near_duplicates(
    drafts: list[Draft], threshold: float
) -> tuple[list[Draft], list[Rejection]]:
    """Keep the first of questions on one image that say nearly the same; refuse the others."""
    kept: list[Draft] = []
    refused = []
    for draft in drafts:
        twin = next(
            (
                k
                for k in kept
                if k.image_id == draft.image_id
                and difflib.SequenceMatcher(None, _norm(k.question), _norm(draft.question)).ratio()
                >= threshold
                and _norm(k.correct) == _norm(draft.correct)
            ),
            None,
        )
        if twin is None:
            kept.append(draft)
        else:
            refused.append(
                draft.reject(
                    "near_duplicate",
                    f"says nearly the same as '{twin.question}' ({twin.generator})",
                )
            )
    return kept, refused


def to_candidate(draft: Draft, seed: int, rules: Rules) -> CandidateRecord:
    """The candidate: options in a seeded order with the correct one at a hash-chosen letter."""
    n = 1 + len(draft.distractors)
    key = {
        "image": draft.image_id,
        "dimension": draft.dimension,
        "question": draft.question,
        "seed": seed,
    }
    position = int(content_hash(key), 16) % n
    # each distractor with its parts (none for an item that has none), shuffled together
    parts = draft.option_slots[1:] or [{}] * len(draft.distractors)
    wrong = list(zip(draft.distractors, parts, strict=True))
    random.Random(content_hash({**key, "order": True})).shuffle(wrong)
    distractors = [text for text, _ in wrong]
    options = distractors[:position] + [draft.correct] + distractors[position:]
    option_slots = []
    if draft.option_slots:
        shuffled = [slots for _, slots in wrong]
        option_slots = shuffled[:position] + [draft.option_slots[0]] + shuffled[position:]
    return CandidateRecord(
        question_id=question_id(draft.image_id, draft.question, options),
        image_id=draft.image_id,
        dimension=draft.dimension,
        question=draft.question,
        hint=None,
        options=options,
        answer=LETTERS[position],
        category=draft.dimension,
        l2_category=None,
        split=None,
        generator=draft.generator,
        prompt_id=draft.prompt_id,
        prompt_hash=draft.prompt_hash,
        evidence=draft.evidence,
        source=draft.source,
        meta=dict(sorted(draft.meta.items())),
        flags=length_flags(options, rules.length_ratio),
        cost=draft.cost,
        raw_output=draft.raw_output,
        slots=dict(draft.slots),
        option_slots=[dict(o) for o in option_slots],
    )


def letter_distribution(candidates: list[CandidateRecord]) -> dict[str, int]:
    return dict(sorted(Counter(c.answer for c in candidates).items()))
