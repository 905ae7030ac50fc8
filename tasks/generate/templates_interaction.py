"""Instance interaction templates: which object touches, overlaps or lies inside another, read
from the objects' boxes, mask areas and shape hints (`geometry.relation`). A question is asked
only when the object it names meets exactly one other object, both named by a colour that is
theirs alone; the wrong options are objects well apart from it, then colours the image lacks."""

from __future__ import annotations

import random

from benchfoundry.core.records import Instance
from benchfoundry.extractors.base import ANALYSIS_SIDE
from benchfoundry.extractors.colour_names import candidates, clear
from benchfoundry.tasks.generate.geometry import APART, apart, relation
from benchfoundry.tasks.generate.templates import (
    COLOURS,
    Asked,
    Draw,
    Question,
    Slots,
    asked,
    box_text,
    name,
    named,
    named_by_colour,
    parts,
    pick,
)

RELATIONS = {"contain": "contains", "overlap": "overlaps", "touch": "touches"}
RULES = {
    "contains": "the second box lies inside the first's box and shape",
    "overlaps": "the boxes cross deeply on both axes, each sticking out of the other",
    "touches": "the boxes meet on one axis where both shapes reach",
}
BACKGROUND_COLOURS = {"white", "grey"}  # a plain background is often these: no wrong option


def absent_colours(instances: list[Instance]) -> list[str]:
    """Colours no region of the image has, to name objects that are not there (nor a name a
    person could give a region whose colour is unclear)."""
    present = {i.attributes[0] for i in instances if i.attributes}
    present |= set().union(*(candidates(w) for w in present if not clear(w)))
    return [c for c in COLOURS if c not in present and c not in BACKGROUND_COLOURS]


def wrong_objects(
    rng: random.Random, objects: list[Instance], all_instances: list[Instance], keep: list[Instance]
) -> list[Slots]:
    """Up to three wrong options: objects named by their own colour that are not in `keep`,
    then colours the image lacks."""
    present = [parts(i)[0] for i in named_by_colour(objects) if i not in keep]
    wrong = pick(rng, present, set(), 3)
    wrong += pick(rng, absent_colours(all_instances), set(), 3 - len(wrong))
    return [named(c) for c in wrong]


def interaction_questions(
    kind: str, draw: Draw, objects: list[Instance], all_instances: list[Instance]
) -> Asked:
    """Questions of one kind (`contain`, `overlap`, `touch`) about the image's objects."""
    if len(objects) < 2:
        return Asked(why_not="one_object" if objects else "no_objects")
    wanted = RELATIONS[kind]
    own = named_by_colour(objects)
    pairs = [
        (a, b)
        for a in objects
        for b in objects
        if a is not b
        and relation(a, b) == wanted
        and (wanted == "contains" or a.mask_area >= b.mask_area)
    ]
    out = []
    for reference, answer in pairs:
        near = [o for o in objects if o is not reference and not apart(o, reference)]
        if reference not in own or answer not in own or near != [answer]:
            continue
        ref_name, key = name(parts(reference)[0]), name(parts(answer)[0])
        slots, key_slots = named(parts(reference)[0]), named(parts(answer)[0])
        wrong = wrong_objects(draw(slots, key_slots), objects, all_instances, [reference, answer])
        evidence = (
            f"{ref_name} at {box_text(reference)} and {key} at {box_text(answer)}: "
            f"{RULES[wanted]}; every other object at least {APART / ANALYSIS_SIDE:.1%} of the "
            f"image's width from {ref_name}"
        )
        out.append(Question(kind, slots, key_slots, wrong, [evidence]))
        if len(out) == 2:
            break
    return asked(out, "no_clear_pair" if pairs else "no_contact")
