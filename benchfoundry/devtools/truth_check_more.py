"""The truth check of identity, interaction, reasoning and scene questions: each keyed option
against what the scene's objects, drawn again from their truth, say. Strict: the question is
right only when the keyed option is true and no other option is (an object an option names
must be one object, or none). A question about objects nobody can tell apart (a photograph's)
or count (a texture's, a logo's) has no answer: `unanswerable` says why."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import numpy as np

from benchfoundry.devtools.hard_shapes import truth_mask
from benchfoundry.devtools.scene_shapes import relations_between, visible

NOUNS = {
    "circle": {"a circle", "an oval"},  # a circle is an oval too
    "oval": {"an oval"},
    "square": {"a square", "a rectangle"},
    "rectangle": {"a rectangle"},
    "triangle": {"a triangle"},
    "diamond": {"a diamond"},
    "pentagon": {"a pentagon"},
    "hexagon": {"a hexagon"},
    "octagon": {"an octagon"},
    "star": {"a star"},
    "cross": {"a cross"},
    "ring": {"a ring"},
}
CONTENTS = (
    "one object and no text",
    "several objects and no text",
    "text but no objects",
    "both objects and text",
)


@dataclass(frozen=True)
class Verdict:
    right: bool
    expected: str | None
    why: str


def position(box: list[float], width: int, height: int) -> str:
    from benchfoundry.extractors.describe import position_phrase

    return position_phrase(tuple(box), width, height)  # type: ignore[arg-type]


def _masks(scene: dict, ink: bool) -> list[np.ndarray]:
    """Each object's pixels as drawn (`ink`), or the region it encloses (an outline's inside)."""
    width, height = scene["width"], scene["height"]
    return [truth_mask(o, width, height, ink) for o in scene.get("objects", [])]


READ_TEXT = "Which text is written in the image?"
MOST_COMMON = "Which colour is the most common among the objects in the image?"
CONTENT = "What does the image contain?"


def unanswerable(question: str, scene: dict) -> str | None:
    """Why a careful person could not answer the question about this scene: its objects cannot
    be told apart (a photograph), or the question counts objects nobody can count (the squares
    of a texture, the parts of a logo). None when the truth can answer it."""
    if question == READ_TEXT:
        return None
    if scene.get("objects_known") is False:
        return "a photograph: its objects cannot be counted, named or located"
    # what the image contains is counting too: one object or several, objects or none (is a
    # logo's disc an object, or a letter?)
    counts = question in (MOST_COMMON, CONTENT) or question.startswith(
        ("How many ", "Are there more ", "If the ")
    )
    if counts and scene.get("countable") is False:
        return "the objects cannot be counted (a texture or a logo)"
    return None


def _one(scene: dict, colour: str) -> int | None:
    """The index of the one object of a colour; None when there are none or several."""
    found = [k for k, o in enumerate(scene.get("objects", [])) if o["colour"] == colour]
    return found[0] if len(found) == 1 else None


def _strict(options: list[str], keyed: str, true: set[str], why: str) -> Verdict:
    """Right when the keyed option is the only true one."""
    expected = next(iter(true)) if len(true) == 1 else None
    return Verdict(
        keyed in true and len(true) == 1, expected, f"{why}; true options: {sorted(true)}"
    )


def _named_relation(question: str, options: list[str], keyed: str, scene: dict) -> Verdict | None:
    m = re.fullmatch(r"Which object (is inside|overlaps|touches) the (\w+) object\?", question)
    if not m:
        return None
    ref = _one(scene, m.group(2))
    if ref is None:
        return Verdict(False, None, "the named colour is not one object")
    relations = relations_between(_masks(scene, ink=False))
    holds = {
        "is inside": lambda r, k: r.relation == "contains" and (r.a, r.b) == (ref, k),
        "overlaps": lambda r, k: r.relation in ("overlaps", "contains") and {r.a, r.b} == {ref, k},
        "touches": lambda r, k: {r.a, r.b} == {ref, k},
    }[m.group(1)]
    true = set()
    for option in options:
        n = re.fullmatch(r"the (\w+) object", option)
        colours = [o["colour"] for o in scene.get("objects", [])]
        if n is None or colours.count(n.group(1)) > 1:
            return Verdict(False, None, f"option {option!r} names no single object")
        k = _one(scene, n.group(1))
        if k is not None and any(holds(r, k) for r in relations):
            true.add(option)
    return _strict(options, keyed, true, "relations of the drawn shapes")


def _beside(question: str, scene: dict) -> str | None | bool:
    m = re.fullmatch(
        r"How many objects are (to the left of|to the right of|above|below) the (\w+) object\?",
        question,
    )
    if not m:
        return False
    ref = _one(scene, m.group(2))
    if ref is None:
        return None
    r = scene["objects"][ref]["box"]
    sides = {
        "to the left of": lambda b: b[2] < r[0],
        "to the right of": lambda b: b[0] > r[2],
        "above": lambda b: b[3] < r[1],
        "below": lambda b: b[1] > r[3],
    }
    side = m.group(1)
    other = {"to the left of": "to the right of", "above": "below"}
    other |= {v: k for k, v in other.items()}
    boxes = [o["box"] for k, o in enumerate(scene["objects"]) if k != ref]
    if any(not sides[side](b) and not sides[other[side]](b) for b in boxes):
        return None  # an object across the reference's edge: neither side plainly
    return str(sum(sides[side](b) for b in boxes))


def _which_side(question: str, options: list[str], keyed: str, scene: dict) -> Verdict | None:
    """ "Which object is <side> the X object?": an option is true when the object it names lies
    wholly on that side of X's box; the question is right when only the key is (and no other
    object lies across X's edge on that side, where the question would be unclear)."""
    m = re.fullmatch(
        r"Which object is (to the left of|to the right of|above|below) the (\w+) object\?",
        question,
    )
    if not m:
        return None
    ref = _one(scene, m.group(2))
    if ref is None:
        return Verdict(False, None, "the named colour is not one object")
    r = scene["objects"][ref]["box"]
    on = {
        "to the left of": lambda b: b[2] < r[0],
        "to the right of": lambda b: b[0] > r[2],
        "above": lambda b: b[3] < r[1],
        "below": lambda b: b[1] > r[3],
    }[m.group(1)]
    off = {
        "to the left of": lambda b: b[0] >= r[0] - 1,
        "to the right of": lambda b: b[2] <= r[2] + 1,
        "above": lambda b: b[1] >= r[1] - 1,
        "below": lambda b: b[3] <= r[3] + 1,
    }[m.group(1)]
    others = [o["box"] for k, o in enumerate(scene["objects"]) if k != ref]
    if any(not on(b) and not off(b) for b in others):
        return Verdict(False, None, "an object lies across the reference's edge on that side")
    true = set()
    for option in options:
        n = re.fullmatch(r"the (\w+) object", option)
        colours = [o["colour"] for o in scene.get("objects", [])]
        if n is None or colours.count(n.group(1)) > 1:
            return Verdict(False, None, f"option {option!r} names no single object")
        k = _one(scene, n.group(1))
        if k is not None and on(scene["objects"][k]["box"]):
            true.add(option)
    return _strict(options, keyed, true, "boxes in the truth")


def _layout(question: str, scene: dict) -> str | None | bool:
    if question == "Which side of the image are the objects on, left or right?":
        k, words = 0, ("only the left side", "only the right side", "both sides")
    elif question == "Which half of the image holds the objects, top or bottom?":
        k, words = 1, ("only the top half", "only the bottom half", "both halves")
    else:
        return False
    middle = (scene["width"], scene["height"])[k] / 2
    before = [o["box"][k + 2] + 1 <= middle for o in scene["objects"]]
    after = [o["box"][k] >= middle for o in scene["objects"]]
    if not all(b or a for b, a in zip(before, after, strict=True)):
        return None
    return words[0] if all(before) else words[1] if all(after) else words[2]


def check_more(question: str, options: list[str], keyed: str, scene: dict) -> Verdict:
    """The verdict on a question of the newer templates ("not a template question" else)."""
    objects = scene.get("objects", [])
    colours = Counter(o["colour"] for o in objects)
    width, height = scene["width"], scene["height"]

    def verdict(expected: str | None, why: str) -> Verdict:
        return Verdict(expected is not None and expected == keyed, expected, why)

    if m := re.fullmatch(r"What is the (?:(\w+) )?object at the (.+) of the image\?", question):
        found = [
            o
            for o in objects
            if (m.group(1) is None or o["colour"] == m.group(1))
            and position(o["box"], width, height) == m.group(2)
        ]
        if len(found) != 1:
            return Verdict(False, None, f"{len(found)} matching objects")
        true = {o for o in options if o in NOUNS[found[0]["shape"]]}
        return _strict(options, keyed, true, f"the object is a {found[0]['shape']}")
    if named := _named_relation(question, options, keyed, scene):
        return named
    if side := _which_side(question, options, keyed, scene):
        return side
    if m := re.fullmatch(
        r"Are there more (\w+) objects, more (\w+) objects, or as many of each in the image\?",
        question,
    ):
        n, k = colours[m.group(1)], colours[m.group(2)]
        expected = (
            "as many of each" if n == k else f"more {m.group(1) if n > k else m.group(2)} objects"
        )
        return verdict(expected, f"{n} {m.group(1)}, {k} {m.group(2)} in the truth")
    if question == MOST_COMMON:
        ranked = colours.most_common()
        single = len(ranked) == 1 or (len(ranked) > 1 and ranked[0][1] > ranked[1][1])
        return verdict(ranked[0][0] if ranked and single else None, f"colours {dict(colours)}")
    if m := re.fullmatch(
        r"If the (\w+) objects were removed, how many objects would remain\?", question
    ):
        return verdict(str(len(objects) - colours[m.group(1)]), "objects in the truth")
    if (beside := _beside(question, scene)) is not False:
        return verdict(beside, "boxes in the truth")  # type: ignore[arg-type]
    if question == CONTENT:
        text = bool(scene.get("text_lines"))
        index = (3 if objects else 2) if text else (0 if len(objects) == 1 else 1)
        return verdict(
            CONTENTS[index] if objects or text else None, "objects and text in the truth"
        )
    if question == "Apart from the background, which colour covers the largest area of the image?":
        areas: Counter[str] = Counter()
        for obj, mask in zip(objects, visible(_masks(scene, ink=True)), strict=True):
            areas[obj["colour"]] += int(mask.sum())
        for line in scene.get("text_lines", []):  # letters are pixels of their colour too
            if "colour" in line:
                areas[line["colour"]] += line["ink"]
        ranked = areas.most_common()
        single = len(ranked) == 1 or (len(ranked) > 1 and ranked[0][1] > ranked[1][1])
        return verdict(ranked[0][0] if ranked and single else None, f"visible areas {dict(areas)}")
    if (side := _layout(question, scene)) is not False:
        return verdict(side, "boxes in the truth")  # type: ignore[arg-type]
    return Verdict(False, None, "not a template question")
