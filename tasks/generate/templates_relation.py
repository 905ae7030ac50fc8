"""Spatial relation templates beside relative position: which object lies to one side of another
(SEED-Bench asks both "where is A relative to B" and "which object is left of B"). The options
name objects by their colours, so they differ from image to image; relative position's four
options are the same four phrases everywhere, which a text-only model or an option-length
baseline answers alike on every question.

A question is asked only when its key is the one object wholly on that side of the reference
and every other object lies wholly off it (by their extent: a covered part of an object lies
under the one that covers it); the wrong options are objects off that side, then colours the
image lacks."""

from __future__ import annotations

import random

from benchfoundry.core.records import Instance
from benchfoundry.tasks.generate.geometry import apart, extent
from benchfoundry.tasks.generate.templates import (
    RELATIONS,
    Asked,
    Question,
    asked,
    box_text,
    name,
    named,
    named_by_colour,
    parts,
    pick,
)
from benchfoundry.tasks.generate.templates_interaction import absent_colours

Box = tuple[float, float, float, float]


def on_side(box: Box, ref: Box, side: str, margin: float) -> bool:
    """The box lies wholly on that side of the reference, `margin` px clear of its edge."""
    x0, y0, x1, y1 = box
    r0, s0, r1, s1 = ref
    return {
        RELATIONS[0]: x1 + margin <= r0,
        RELATIONS[1]: r1 + margin <= x0,
        RELATIONS[2]: y1 + margin <= s0,
        RELATIONS[3]: s1 + margin <= y0,
    }[side]


def off_side(box: Box, ref: Box, side: str) -> bool:
    """No part of the box reaches past the reference's edge on that side: whatever else it is
    (above it, below it, on the other side), it is not on this one."""
    x0, y0, x1, y1 = box
    r0, s0, r1, s1 = ref
    return {
        RELATIONS[0]: x0 >= r0,
        RELATIONS[1]: x1 <= r1,
        RELATIONS[2]: y0 >= s0,
        RELATIONS[3]: y1 <= s1,
    }[side]


def which_object(
    rng: random.Random, objects: list[Instance], all_instances: list[Instance], margin: float = 3.0
) -> Asked:
    """One question an image: "Which object is <side> the <colour> object?", the reference
    and the key named by colours of their own, the reference clear of every other object (its
    box is its own)."""
    if len(objects) < 2:
        return Asked(why_not="one_object" if objects else "no_objects")
    own = named_by_colour(objects)
    # largest first as the describer ranks them (`describe.in_order`: objects of one size by
    # place), so that near-equal areas, which a resize or JPEG swaps, do not change the question
    for reference in own:
        if any(not apart(o, reference) for o in objects if o is not reference):
            continue
        ref = reference.box
        others = [(o, extent(o, objects)) for o in objects if o is not reference]
        sides = list(RELATIONS)
        rng.shuffle(sides)
        for side in sides:
            on = [o for o, box in others if on_side(box, ref, side, margin)]
            off = [o for o, box in others if off_side(box, ref, side)]
            if len(on) != 1 or len(on) + len(off) != len(others) or on[0] not in own:
                continue
            wrong = pick(rng, [parts(o)[0] for o in off if o in own], set(), 3)
            if not wrong:
                continue  # only colours the image lacks: a question of colour, not of place
            wrong += pick(rng, absent_colours(all_instances), set(), 3 - len(wrong))
            key = on[0]
            return Asked(
                [
                    Question(
                        "which_object",
                        {"side": side, **named(parts(reference)[0])},
                        named(parts(key)[0]),
                        [named(c) for c in wrong],
                        [
                            f"{name(parts(key)[0])} at {box_text(key)} lies wholly {side} the box "
                            f"{box_text(reference)}; every other object lies wholly off that side"
                        ],
                    )
                ]
            )
    return asked([], "no_clear_side")
