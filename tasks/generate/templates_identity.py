"""Instance identity templates: what the object at a place is, named by the describer's label
when it gave one, else by its shape (the name both readings' outlines give it). Asked of objects clear of
others and of the grid lines, alone at their position (or alone of their colour there, where every object's colour is clear)."""

from __future__ import annotations

from benchfoundry.core.records import Instance
from benchfoundry.extractors.agreement import shape_of
from benchfoundry.extractors.shapes import SHAPE_NAMES
from benchfoundry.meaning.en import article
from benchfoundry.tasks.generate.geometry import fill
from benchfoundry.tasks.generate.templates import (
    Asked,
    Draw,
    Question,
    alone,
    asked,
    box_text,
    clear_objects,
    each,
    parts,
    pick,
    unclear_colours,
)

# "a circle", "an oval", "a hexagon", ...: what an option says, by shape name
SHAPE_NOUNS = {name: article(name) for name in SHAPE_NAMES}
NOUN_OF = {text: name for name, text in SHAPE_NOUNS.items()}
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


def identity_questions(draw: Draw, objects: list[Instance], size: tuple[float, float]) -> Asked:
    """What the object at a place is: its label when the describer gave one and another object
    has a different label, else its shape (the name both readings' outlines give it,
    `agreement.shape_of`). Asked of objects clear of others and of the grid, alone at their
    position (or alone of their colour there)."""
    out = []
    for inst in clear_objects(objects, size):
        colour, _, where = parts(inst)
        if alone(inst, objects, size, False, False, True):
            slots = {"position": where}
        elif not unclear_colours(objects) and alone(inst, objects, size, True, False, True):
            slots = {"colour": colour, "position": where}
        else:
            continue
        others = sorted({i.label for i in objects if i.label and i.label != inst.label})
        shape = shape_of(inst)
        if inst.label and others:
            key = {"name": inst.label}
            wrong = each("name", pick(draw(slots, key), others, set(), 3))
            why = f'the describer\'s label "{inst.label}"'
        elif shape:
            exclude = {SHAPE_NOUNS[n] for n in {shape} | ALSO_TRUE.get(shape, set())}
            key = {"noun": shape}
            picked = pick(draw(slots, key), list(SHAPE_NOUNS.values()), exclude, 3)
            wrong = [{"noun": NOUN_OF[text]} for text in picked]
            why = f"both readings' outlines name it {shape}, mask fills {fill(inst):.2f} of its box"
        else:
            continue
        evidence = f"instance at {box_text(inst)}, alone at the {where}: {why}"
        out.append(Question("identity", slots, key, wrong, [evidence]))
        if len(out) == 2:
            break
    return asked(out, "no_clear_object" if objects else "no_objects")
