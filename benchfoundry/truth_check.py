"""Check template questions about synthetic scenes against the scenes' ground truth: the
measure of how often the pipeline's own answer keys are right."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

SHAPE_OF_HINT = {"round": "circle", "rectangular": "square", "triangular": "triangle"}
LETTERS = "ABCDEFGHIJ"


def _position(box: list[float], width: int, height: int) -> str:
    from extractors.describe import position_phrase

    return position_phrase(tuple(box), width, height)  # type: ignore[arg-type]


def _area(obj: dict) -> float:
    half = (obj["box"][2] - obj["box"][0]) / 2
    return {
        "square": 4 * half * half,
        "circle": math.pi * half * half,
        "triangle": 2 * half * half,
    }[obj["shape"]]


def _match(objects: list[dict], colour: str | None = None, hint: str | None = None) -> list[dict]:
    return [
        o
        for o in objects
        if (colour is None or o["colour"] == colour)
        and (hint is None or o["shape"] == SHAPE_OF_HINT[hint])
    ]


@dataclass(frozen=True)
class Verdict:
    right: bool
    expected: str | None
    why: str


def check(question: str, options: list[str], answer: str, scene: dict) -> Verdict:
    """Whether the keyed option is what the truth says; None expected when the truth has no
    single answer (an ambiguous question counts as wrong)."""
    objects = scene.get("objects", [])
    keyed = options[LETTERS.index(answer)]
    width, height = scene["width"], scene["height"]

    def verdict(expected: str | None, why: str) -> Verdict:
        return Verdict(
            expected is not None and expected.casefold() == keyed.casefold(), expected, why
        )

    if question == "How many objects are there in the image?":
        return verdict(str(len(objects)), "objects in the truth")
    if m := re.fullmatch(r"How many (\w+) objects are there in the image\?", question):
        return verdict(str(len(_match(objects, m.group(1)))), f"{m.group(1)} objects in the truth")
    if m := re.fullmatch(
        r"Where in the image is the (\w+)(?: (round|rectangular|triangular))? object\?", question
    ):
        found = _match(objects, m.group(1), m.group(2))
        return verdict(
            _position(found[0]["box"], width, height) if len(found) == 1 else None,
            f"{len(found)} matching objects",
        )
    if m := re.fullmatch(
        r"What colour is the (?:(round|rectangular|triangular) )?object at the (.+) of the image\?",
        question,
    ):
        found = [
            o
            for o in _match(objects, None, m.group(1))
            if _position(o["box"], width, height) == m.group(2)
        ]
        return verdict(
            found[0]["colour"] if len(found) == 1 else None, f"{len(found)} matching objects"
        )
    if m := re.fullmatch(r"Which object is the (largest|smallest) in the image\?", question):
        named = [(o, re.fullmatch(r"the (\w+) object", opt)) for opt in options for o in objects]
        colours = [re.fullmatch(r"the (\w+) object", opt).group(1) for opt in options]  # type: ignore[union-attr]
        areas = {c: [_area(o) for o in _match(objects, c)] for c in colours}
        if any(len(a) != 1 for a in areas.values()):
            return verdict(None, "an option's colour is not one object")
        pick = (max if m.group(1) == "largest" else min)(colours, key=lambda c: areas[c][0])
        del named
        return verdict(f"the {pick} object", "areas from the truth")
    if m := re.fullmatch(r"Where is the (\w+) object relative to the (\w+) object\?", question):
        a, b = _match(objects, m.group(1)), _match(objects, m.group(2))
        if len(a) != 1 or len(b) != 1:
            return verdict(None, "colours are not single objects")
        (ax, ay), (bx, by) = a[0]["center"], b[0]["center"]
        dx, dy = ax - bx, ay - by
        relation = (
            ("to the left of" if dx < 0 else "to the right of")
            if abs(dx) > abs(dy)
            else ("above" if dy < 0 else "below")
        )
        return verdict(f"{relation} it", "centres in the truth")
    if question == "Which text is written in the image?":
        lines = [line["text"] for line in scene.get("text_lines", [])]
        return Verdict(
            keyed.casefold() in (t.casefold() for t in lines), None, "text lines in the truth"
        )
    return Verdict(False, None, "not a template question")
