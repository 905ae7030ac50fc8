"""Instance identity templates: what the object at a place is, named by the describer's label
when it gave one, else by its shape (from the shape hint and the box). Asked of objects clear of
others and of the grid lines, alone at their position (or alone of their colour there)."""

from __future__ import annotations

import random

from benchfoundry.core.records import Instance
from benchfoundry.tasks.generate.geometry import fill, hint
from benchfoundry.tasks.generate.templates import (
    Asked,
    alone,
    asked,
    box_text,
    clear_objects,
    parts,
    pick,
)

SHAPE_NOUNS = (
    "a circle",
    "an oval",
    "a square",
    "a rectangle",
    "a triangle",
    "a star",
    "a hexagon",
)
ALSO_TRUE = {"a circle": "an oval", "a square": "a rectangle"}  # a circle is an oval too


def _noun(inst: Instance) -> str | None:
    """What the object's shape hint and box make it: a circle or an oval, a square or a
    rectangle, a triangle."""
    shape = hint(inst)
    x0, y0, x1, y1 = inst.box
    even = max(x1 - x0, y1 - y0) <= 1.15 * max(1.0, min(x1 - x0, y1 - y0))
    if shape == "round":
        return "a circle" if even else "an oval"
    if shape == "rectangular":
        return "a square" if even else "a rectangle"
    return "a triangle" if shape == "triangular" else None


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
            exclude = {noun, ALSO_TRUE.get(noun, noun)}
            correct, distractors = noun, pick(rng, SHAPE_NOUNS, exclude, 3)
            why = f"shape hint {hint(inst)}, mask fills {fill(inst):.2f} of its box"
        else:
            continue
        evidence = f"instance at {box_text(inst)}, alone at the {where}: {why}"
        out.append((question, correct, distractors, [evidence]))
        if len(out) == 2:
            break
    return asked(out, "no_clear_object" if objects else "no_objects")
