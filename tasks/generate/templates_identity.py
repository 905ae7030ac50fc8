"""Instance identity templates: what the object at a place is, named by the describer's label
when it gave one, else by its shape (the name both readings' outlines give it). Asked of objects clear of
others and of the grid lines, alone at their position (or alone of their colour there)."""

from __future__ import annotations

import random

from benchfoundry.core.records import Instance
from benchfoundry.extractors.agreement import shape_of
from benchfoundry.extractors.shapes import SHAPE_NAMES
from benchfoundry.tasks.generate.geometry import fill
from benchfoundry.tasks.generate.templates import (
    Asked,
    alone,
    asked,
    box_text,
    clear_objects,
    parts,
    pick,
)

SHAPE_NOUNS = {
    name: f"{'an' if name[0] in 'aeiou' else 'a'} {name}" for name in SHAPE_NAMES
}  # "a circle", "an oval", "a hexagon", ...
# Names that are also true of a shape, so never its distractors: a circle is an oval, a square a
# rectangle, a diamond a (turned) square, a ring round.
ALSO_TRUE = {
    "circle": {"oval", "ring"},
    "oval": {"circle", "ring"},
    "square": {"rectangle", "diamond"},
    "rectangle": {"square", "diamond"},
    "diamond": {"square", "rectangle"},
    "ring": {"circle", "oval"},
}


def _noun(inst: Instance) -> str | None:
    """What the object is, as both readings' outlines name it (`agreement.shape_of`)."""
    name = shape_of(inst)
    return SHAPE_NOUNS[name] if name else None


def identity_questions(
    rng: random.Random, objects: list[Instance], size: tuple[float, float]
) -> Asked:
    """What the object at a place is: its label when the describer gave one and another object
    has a different label, else its shape. Asked of objects clear of others and of the grid,
    alone at their position (or alone of their colour there)."""
    out = []
    for inst in clear_objects(objects, size):
        colour, _, where = parts(inst)
        if alone(inst, objects, size, False, False, True):
            question = f"What is the object at the {where} of the image?"
        elif alone(inst, objects, size, True, False, True):
            question = f"What is the {colour} object at the {where} of the image?"
        else:
            continue
        others = sorted({i.label for i in objects if i.label and i.label != inst.label})
        noun = _noun(inst)
        if inst.label and others:
            correct, distractors = inst.label, pick(rng, others, set(), 3)
            why = f'the describer\'s label "{inst.label}"'
        elif noun:
            name = shape_of(inst) or ""
            exclude = {SHAPE_NOUNS[n] for n in {name} | ALSO_TRUE.get(name, set())}
            correct, distractors = noun, pick(rng, list(SHAPE_NOUNS.values()), exclude, 3)
            why = f"both readings' outlines name it {name}, mask fills {fill(inst):.2f} of its box"
        else:
            continue
        evidence = f"instance at {box_text(inst)}, alone at the {where}: {why}"
        out.append((question, correct, distractors, [evidence]))
        if len(out) == 2:
            break
    return asked(out, "no_clear_object" if objects else "no_objects")
