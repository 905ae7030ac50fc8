"""Check template questions about synthetic scenes against the scenes' ground truth: the
measure of how often the pipeline's own answer keys are right. The perception questions are
checked here; identity, interaction, reasoning and scene questions in `truth_check_more`."""

from __future__ import annotations

import math
import re

from benchfoundry.core.letters import LETTERS
from benchfoundry.devtools.hard_shapes import truth_mask
from benchfoundry.devtools.truth_check_more import Verdict, check_more, unanswerable
from benchfoundry.devtools.truth_check_more import position as _position

# The shapes a shape hint fits; the other shapes (a star, a hexagon, ...) fit none.
HINT_SHAPES = {
    "round": {"circle", "oval"},
    "rectangular": {"square", "rectangle"},
    "triangular": {"triangle"},
}


def _area(obj: dict, width: int, height: int) -> float:
    """A synthetic scene's shape by its formula (as it always was); a hard drawing's object by
    its pixels (an outline by the region it encloses)."""
    if "style" in obj:
        return float(truth_mask(obj, width, height, ink=False).sum())
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
        and (hint is None or o["shape"] in HINT_SHAPES[hint])
    ]


def _shared(values: list[str | None]) -> str | None:
    """The one value all the matching objects share (two red circles at the centre are red,
    whichever "the object" means); None when none match or they differ."""
    return values[0] if values and len(set(values)) == 1 else None


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

    if why := unanswerable(question, scene):
        return verdict(None, why)
    if question == "How many objects are there in the image?":
        return verdict(str(len(objects)), "objects in the truth")
    if m := re.fullmatch(r"How many (\w+) objects are there in the image\?", question):
        return verdict(str(len(_match(objects, m.group(1)))), f"{m.group(1)} objects in the truth")
    if m := re.fullmatch(
        r"Where in the image is the (\w+)(?: (round|rectangular|triangular))? object\?", question
    ):
        found = _match(objects, m.group(1), m.group(2))
        return verdict(
            _shared([_position(o["box"], width, height) for o in found]),
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
        return verdict(_shared([o["colour"] for o in found]), f"{len(found)} matching objects")
    if m := re.fullmatch(r"Which object is the (largest|smallest) in the image\?", question):
        area = {id(o): _area(o, width, height) for o in objects}
        ranked = sorted(objects, key=lambda o: area[id(o)], reverse=m.group(1) == "largest")
        if len(ranked) < 2 or abs(area[id(ranked[0])] - area[id(ranked[1])]) < 1e-6:
            return verdict(None, "no single extreme object")
        extreme = ranked[0]
        if len(_match(objects, extreme["colour"])) != 1:
            return verdict(None, "the extreme object's colour is not its alone")
        named = [re.fullmatch(r"the (\w+) object", o) for o in options]
        if any(n is None or len(_match(objects, n.group(1))) != 1 for n in named):
            return verdict(None, "an option does not name exactly one object")
        return verdict(f"the {extreme['colour']} object", f"{m.group(1)} by area in the truth")
    if m := re.fullmatch(r"Where is the (\w+) object relative to the (\w+) object\?", question):
        a, b = _match(objects, m.group(1)), _match(objects, m.group(2))
        if len(a) != 1 or len(b) != 1:
            return verdict(None, "colours are not single objects")
        ab, bb = a[0]["box"], b[0]["box"]
        apart_x = ab[2] < bb[0] or bb[2] < ab[0]
        apart_y = ab[3] < bb[1] or bb[3] < ab[1]
        if apart_x and not apart_y:
            relation = "to the left of" if ab[2] < bb[0] else "to the right of"
        elif apart_y and not apart_x:
            relation = "above" if ab[3] < bb[1] else "below"
        else:
            return verdict(
                None, "the boxes are apart on both axes or on neither: more than one relation holds"
            )
        return verdict(f"{relation} it", "boxes in the truth")
    if question == "Which text is written in the image?":
        lines = [line["text"].casefold() for line in scene.get("text_lines", [])]
        text = " ".join(lines)
        true_options = [
            o
            for o in options
            if o.casefold() in lines or (o.casefold() in text and len(o.split()) > 1)
        ]
        right = keyed.casefold() in lines and true_options == [keyed]
        return Verdict(
            right, None, "text lines in the truth" if right else f"true options: {true_options}"
        )
    return check_more(question, options, keyed, scene)
