"""Check template questions about synthetic scenes and drawings against their truth: the
measure of how often the pipeline's own answer keys are right. A question is judged by what it
means (`benchfoundry.meaning`: its kind's answer, with the truth as the scene), from its parts
(`slots`, `option_slots`), never from its text. Strict: the key is right only when it alone
among the options is true, and every option that names an object names one object. A question
a careful person could not answer about the scene (its objects cannot be told apart or counted,
its description fits no single object) counts as wrong."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from benchfoundry import meaning
from benchfoundry.core.letters import LETTERS
from benchfoundry.devtools.truth_scene import TruthScene

OBJECT_SLOTS = ("object",)  # an option naming an object by its colour


@dataclass(frozen=True)
class Verdict:
    right: bool
    expected: str | None  # what the truth says, in English (None: no single answer)
    why: str


class Item(Protocol):
    """What the check reads of a question: its template kind (`generator`), its parts, its key."""

    generator: str
    slots: Mapping[str, str]
    option_slots: Sequence[Mapping[str, str]]
    answer: str
    meta: Mapping[str, str]  # a clip question's video and stretch


def _said(kind: str, read: meaning.Read, options: Sequence[Mapping[str, str]]) -> str:
    if all(isinstance(v, str) for v in read.values()):
        try:
            return meaning.option(kind, read, "en")  # type: ignore[arg-type]
        except meaning.NoForm:
            pass
    true = [meaning.option(kind, o, "en") for o in options if meaning.fits(kind, read, o)]
    return " or ".join(true) if true else ", ".join(f"{k} {v}" for k, v in read.items())


def check(
    kind: str,
    slots: Mapping[str, str],
    option_slots: Sequence[Mapping[str, str]],
    answer: str,
    scene: dict,
) -> Verdict:
    """Whether the keyed option (letter `answer`) is what the truth says."""
    if kind not in meaning.KINDS or not option_slots or any(not o for o in option_slots):
        return Verdict(False, None, "not a template question written from its parts")
    truth = TruthScene(scene)
    try:
        read = meaning.answer(kind, truth, slots)
    except (meaning.NoAnswer, meaning.Unsure) as why:
        return Verdict(False, None, str(why))
    colours = Counter(t.colour for t in truth.objects_named())
    for option in option_slots:
        named = [option[k] for k in OBJECT_SLOTS if k in option]
        if any(colours[c] > 1 for c in named):
            return Verdict(False, None, f"option {dict(option)} names no single object")
    true = [k for k, o in enumerate(option_slots) if meaning.fits(kind, read, o)]
    keyed = LETTERS.index(answer)
    expected = _said(kind, read, option_slots)
    why = f"the truth reads {expected}; true options: {[LETTERS[k] for k in true]}"
    return Verdict(true == [keyed], expected if len(true) <= 1 else None, why)


def check_item(item: Item, scene: dict, answer: str | None = None) -> Verdict:
    """The check of a candidate (or a released row with its parts), at its key or `answer`."""
    kind = item.generator.removeprefix("template:")
    return check(kind, item.slots, item.option_slots, answer or item.answer, scene)
