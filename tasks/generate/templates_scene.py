"""Scene understanding templates: questions about the whole image that its facts support: what
it holds (one object or several, text or none), which colour covers most of it apart from the
background, and on which sides or halves its objects lie."""

from __future__ import annotations

import random
from collections import Counter

from benchfoundry import meaning
from benchfoundry.core.records import Instance, OcrLine, VisualFactsRecord
from benchfoundry.tasks.generate.geometry import APART, extent, image_area
from benchfoundry.tasks.generate.templates import Asked, Question, asked, each, parts, pick
from benchfoundry.tasks.generate.templates_interaction import absent_colours

CONTENTS = ("one_object_no_text", "several_objects_no_text", "text_no_objects", "objects_and_text")
LAYOUTS = {  # per axis, its answers' fixed phrases
    "x": ("left_only", "right_only", "both_sides"),
    "y": ("top_only", "bottom_only", "both_halves"),
}


def text_lines(facts: VisualFactsRecord) -> list[OcrLine]:
    """Lines read with two letters or digits at least: text, not a shape read as a letter."""
    return [line for line in facts.ocr_lines if sum(ch.isalnum() for ch in line.text) >= 2]


def _far_from(inst: Instance, line: OcrLine) -> bool:
    (x0, y0, x1, y1), (lx0, ly0, lx1, ly1) = inst.box, line.box
    return max(max(x0, lx0) - min(x1, lx1), max(y0, ly0) - min(y1, ly1)) >= APART


def scene_content(facts: VisualFactsRecord, objects: list[Instance], scene: meaning.Scene) -> Asked:
    """One object or several, text or none. Not asked when nothing was found (the facts cannot
    tell an empty image from a missed one), nor when an object lies against a line of text (it
    may be a piece of a letter)."""
    lines = text_lines(facts)
    if not objects and not lines:
        return Asked(why_not="no_objects")
    if lines and any(not _far_from(i, line) for i in objects for line in lines):
        return Asked(why_not="unclear_objects")
    correct = str(meaning.answer("scene_content", scene, {})["fixed"])  # the kind's meaning
    evidence = f"{len(objects)} instances (not glyphs), {len(lines)} text lines read"
    return Asked(
        [
            Question(
                "scene_content",
                {},
                {"fixed": correct},
                each("fixed", [c for c in CONTENTS if c != correct]),
                [evidence],
            )
        ]
    )


def dominant_colour(
    rng: random.Random, facts: VisualFactsRecord, objects: list[Instance], scene: meaning.Scene
) -> Asked:
    """The colour whose objects cover at least half as much again as any other colour's, in an
    image of objects of two colours or more and no text."""
    if len(objects) < 2:
        return Asked(why_not="one_object" if objects else "no_objects")
    if text_lines(facts):
        return Asked(why_not="text_present")
    areas: Counter[str] = Counter()
    pixels: Counter[str] = Counter()  # the image's own, for the evidence
    for inst in objects:
        areas[parts(inst)[0]] += inst.mask_area
        pixels[parts(inst)[0]] += image_area(inst)
    ranked = areas.most_common()
    if len(ranked) < 2:
        return Asked(why_not="one_colour")
    if ranked[0][1] < 1.5 * ranked[1][1]:
        return Asked(why_not="no_clear_margin")
    key = str(meaning.answer("dominant_colour", scene, {})["colour"])  # the kind's meaning
    wrong = pick(rng, [c for c, _ in ranked if c != key], set(), 3)
    wrong += pick(rng, absent_colours(facts.instances), set(), 3 - len(wrong))
    tally = ", ".join(f"{c} {pixels[c]} px" for c, _ in ranked)
    return Asked(
        [
            Question(
                "dominant_colour",
                {},
                {"colour": key},
                each("colour", wrong),
                [f"mask areas by colour: {tally}"],
            )
        ]
    )


def layout(
    facts: VisualFactsRecord,
    objects: list[Instance],
    size: tuple[float, float],
    scene: meaning.Scene,
) -> Asked:
    """Whether the objects lie all on one side (or half) of the image or on both: asked along an
    axis when no object (nor anything it may hide under) crosses its middle line."""
    if len(objects) < 2:
        return Asked(why_not="one_object" if objects else "no_objects")
    if text_lines(facts):
        return Asked(why_not="text_present")
    out = []
    for axis, options in LAYOUTS.items():
        k, middle = (0, size[0] / 2) if axis == "x" else (1, size[1] / 2)
        reaches = [extent(i, objects) for i in objects]
        try:  # the kind's meaning: no answer where an object (or what it hides) crosses the middle
            correct = str(meaning.answer("layout", scene, {"axis": axis})["fixed"])
        except meaning.NoAnswer:
            continue
        spans = ", ".join(f"{round(r[k])}-{round(r[k + 2])}" for r in reaches)
        evidence = f"instances span {spans} on the {axis} axis; the middle is {middle:g}"
        wrong = each("fixed", [o for o in options if o != correct])
        out.append(Question("layout", {"axis": axis}, {"fixed": correct}, wrong, [evidence]))
    return asked(out, "no_clear_side")
