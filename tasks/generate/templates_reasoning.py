"""Visual reasoning templates: comparisons and inferences over the objects' counts and places.
Counting by colour rests on the count of regions of each colour; counting beside an object on
boxes, asked only when every other object lies plainly on one side of it."""

from __future__ import annotations

import random
from collections import Counter

from benchfoundry import meaning
from benchfoundry.core.records import Instance
from benchfoundry.tasks.generate.facts_scene import FactsScene
from benchfoundry.tasks.generate.geometry import apart, extent
from benchfoundry.tasks.generate.templates import (
    Asked,
    Question,
    asked,
    box_text,
    boxes_text,
    each,
    named,
    named_by_colour,
    numbers,
    parts,
    pick,
)
from benchfoundry.tasks.generate.templates_interaction import absent_colours

SIDES = ("to the left of", "to the right of", "above", "below")


def _colours(objects: list[Instance]) -> Counter[str]:
    return Counter(parts(i)[0] for i in objects)


def _tally(colours: Counter[str]) -> str:
    return ", ".join(f"{n} {c}" for c, n in sorted(colours.items()))


def _of_colour(colour: str, objects: list[Instance]) -> list[str]:
    """The evidence line listing every object of a colour that a count counted (none: no line),
    so the desk draws each one."""
    counted = [i for i in objects if parts(i)[0] == colour]
    return [f"{len(counted)} {colour}: {boxes_text(counted)}"] if counted else []


def compare_counts(
    rng: random.Random,
    objects: list[Instance],
    all_instances: list[Instance],
    scene: meaning.Scene | None = None,
) -> Asked:
    """More of one colour, more of another, or as many of each (a colour the image lacks
    counts zero, when only one colour is there)."""
    if len(objects) < 2:
        return Asked(why_not="one_object" if objects else "no_objects")
    scene = scene or FactsScene(None, objects)
    colours = _colours(objects)
    pool = sorted(colours)
    if len(pool) < 2:
        pool += pick(rng, absent_colours(all_instances), set(), 1)
    if len(pool) < 2:
        return Asked(why_not="one_colour")
    first, second = pick(rng, pool, set(), 2)
    slots = named(first) | named(second, "other")
    correct = dict(meaning.answer("compare_counts", scene, slots))  # the kind's meaning
    options = [{"fixed": "more", "colour": first}, {"fixed": "more", "colour": second}]
    options.append({"fixed": "as_many"})
    return Asked(
        [
            Question(
                "compare_counts",
                slots,
                correct,
                [o for o in options if o != correct],
                [
                    f"instances by colour: {_tally(colours)}",
                    *_of_colour(first, objects),
                    *_of_colour(second, objects),
                ],
            )
        ]
    )


def most_common_colour(
    rng: random.Random,
    objects: list[Instance],
    all_instances: list[Instance],
    scene: meaning.Scene | None = None,
) -> Asked:
    """The colour more objects have than any other, among at least three objects of two colours
    or more."""
    if len(objects) < 3:
        return Asked(why_not="one_object" if len(objects) < 2 else "few_objects")
    colours = _colours(objects)
    ranked = colours.most_common()
    if len(ranked) < 2 or ranked[0][1] == ranked[1][1]:
        return Asked(why_not="no_clear_margin" if len(ranked) > 1 else "one_colour")
    winner = str(
        meaning.answer("most_common_colour", scene or FactsScene(None, objects), {})["colour"]
    )
    wrong = pick(rng, [c for c, _ in ranked if c != winner], set(), 3)
    wrong += pick(rng, absent_colours(all_instances), set(), 3 - len(wrong))
    return Asked(
        [
            Question(
                "most_common_colour",
                {},
                {"colour": winner},
                each("colour", wrong),
                [f"instances by colour: {_tally(colours)}", *_of_colour(winner, objects)],
            )
        ]
    )


def remove_and_count(
    rng: random.Random, objects: list[Instance], scene: meaning.Scene | None = None
) -> Asked:
    """How many objects remain when those of one colour are taken away."""
    if len(objects) < 2:
        return Asked(why_not="one_object" if objects else "no_objects")
    colours = _colours(objects)
    colour = pick(rng, sorted(colours), set(), 1)[0]
    scene = scene or FactsScene(None, objects)
    left = int(meaning.answer("remove_and_count", scene, {"colour": colour})["number"])
    return Asked(
        [
            Question(
                "remove_and_count",
                {"colour": colour},
                {"number": str(left)},
                each("number", numbers(left, 3)),
                [
                    f"{len(objects)} instances; {colours[colour]} {colour} taken away",
                    f"{left} remain: " + boxes_text([i for i in objects if parts(i)[0] != colour]),
                ],
            )
        ]
    )


def _side(box: tuple[float, ...], ref: tuple[float, ...], margin: float) -> set[str]:
    sides = set()
    if box[2] + margin <= ref[0]:
        sides.add(SIDES[0])
    if ref[2] + margin <= box[0]:
        sides.add(SIDES[1])
    if box[3] + margin <= ref[1]:
        sides.add(SIDES[2])
    if ref[3] + margin <= box[1]:
        sides.add(SIDES[3])
    return sides


def count_beside(
    rng: random.Random,
    objects: list[Instance],
    scene: meaning.Scene | None = None,
    margin: float = 3.0,
) -> Asked:
    """How many objects lie to one side of an object named by its colour: asked only when every
    other object is plainly on one side of it or the other along that axis."""
    if len(objects) < 2:
        return Asked(why_not="one_object" if objects else "no_objects")
    scene = scene or FactsScene(None, objects)
    out = []
    for reference in named_by_colour(objects):
        if any(not apart(o, reference) for o in objects if o is not reference):
            continue
        ref = reference.box
        others = [_side(extent(o, objects), ref, margin) for o in objects if o is not reference]
        axes = [
            axis
            for axis in ((SIDES[0], SIDES[1]), (SIDES[2], SIDES[3]))
            if all(s & set(axis) for s in others)
        ]
        if not axes:
            continue
        side = rng.choice(rng.choice(axes))
        slots = {"side": side, **named(parts(reference)[0])}
        n = int(meaning.answer("count_beside", scene, slots)["number"])
        rest = [o for o in objects if o is not reference]
        counted = [o for o, s in zip(rest, others, strict=True) if side in s]
        out.append(
            Question(
                "count_beside",
                slots,
                {"number": str(n)},
                each("number", numbers(n, 3)),
                [
                    f"{n} of {len(others)} other instances lie wholly {side} the box {box_text(reference)}",
                    *([f"counted: {boxes_text(counted)}"] if counted else []),
                ],
            )
        )
        break
    return asked(out, "no_clear_side")
