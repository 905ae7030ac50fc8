"""The template generator's perception questions (counting, position, colour, size, relative
position; reading text is `templates_text`) and what every template shares: an image's objects,
how an object is named, the options' pools. Each question is built straight from an image's facts, with its
answer known from them, distractors from the same image's other facts, and the facts it rests
on as evidence. It needs no LLM: the offline default, and a cheap second source beside one."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from benchfoundry import meaning
from benchfoundry.core.records import Instance, VisualFactsRecord
from benchfoundry.extractors.colour_names import candidates, neighbours
from benchfoundry.extractors.colour_names import clear as clear_colour
from benchfoundry.tasks.generate.facts_scene import FactsScene
from benchfoundry.tasks.generate.geometry import (
    apart,
    image_area,
    image_box,
    in_contact,
    ruled_out,
)

Slots = dict[str, str]
# A question's own generator for its options, seeded by what identifies the question (its slots
# and its key; the kind and the image come with it: `template_questions.Seen.draw`), so one
# question more or fewer before it changes none of its options.
Draw = Callable[[Slots, Slots], random.Random]


@dataclass(frozen=True)
class Question:
    """One template question as data: its kind and parts (`slots`), what its key and each wrong
    option is (`key_slots`, `wrong_slots`), and the facts it rests on. Its English is written
    from them (`benchfoundry.meaning`), as every other language's is."""

    kind: str
    slots: Slots
    key_slots: Slots
    wrong_slots: list[Slots]
    evidence: list[str]

    @property
    def question(self) -> str:
        return meaning.question(self.kind, self.slots, "en")

    @property
    def correct(self) -> str:
        return meaning.option(self.kind, self.key_slots, "en")

    @property
    def distractors(self) -> list[str]:
        return [meaning.option(self.kind, o, "en") for o in self.wrong_slots]


def each(key: str, values: Sequence[str]) -> list[Slots]:
    """Options that are each one value of one slot (counts, colours, positions...)."""
    return [{key: v} for v in values]


POSITIONS = (
    "top left",
    "top center",
    "top right",
    "middle left",
    "center",
    "middle right",
    "bottom left",
    "bottom center",
    "bottom right",
)
COLOURS = (
    "red",
    "orange",
    "yellow",
    "green",
    "cyan",
    "blue",
    "purple",
    "pink",
    "brown",
    "black",
    "white",
    "grey",
)
SHAPES = {"round": "round", "rectangular": "rectangular", "triangular": "triangular"}
RELATIONS = ("to the left of", "to the right of", "above", "below")


@dataclass(frozen=True)
class Asked:
    """A template's questions about one image, or why the facts support none."""

    questions: list[Question] = field(default_factory=list)
    why_not: str | None = None


def asked(questions: list[Question], why_not: str) -> Asked:
    return Asked(questions, None if questions else why_not)


def box_text(instance: Instance) -> str:
    """The instance's box in the image's own pixels, as evidence cites it."""
    return str([round(v) for v in image_box(instance)])


def boxes_text(instances: Sequence[Instance]) -> str:
    """Every instance's box, so that what a count counted can be drawn and checked one by one."""
    return ", ".join(box_text(i) for i in instances)


def parts(instance: Instance) -> tuple[str, str | None, str]:
    """(colour, shape hint or None, position phrase) from the describer's attributes."""
    attributes = instance.attributes
    shape = next((a for a in attributes[1:-2] if a in SHAPES), None)
    return attributes[0], shape, attributes[-1]


def pick(rng: random.Random, pool: Sequence[str], exclude: set[str], k: int) -> list[str]:
    choices = sorted(set(pool) - exclude)
    rng.shuffle(choices)
    return choices[:k]


def numbers(correct: int, k: int) -> list[str]:
    near = [n for d in (1, -1, 2, -2, 3, 4) if (n := correct + d) >= 0]
    return [str(n) for n in near[:k]]


def near_grid(inst: Instance, width: float, height: float, margin: float = 0.04) -> bool:
    """A centre this close to a third of the image could be read as the next cell."""
    cx, cy = (inst.box[0] + inst.box[2]) / 2 / width, (inst.box[1] + inst.box[3]) / 2 / height
    return any(abs(c - edge) < margin for c in (cx, cy) for edge in (1 / 3, 2 / 3))


def alone(
    inst: Instance,
    objects: list[Instance],
    size: tuple[float, float],
    colour: bool,
    shape: bool,
    where: bool,
) -> bool:
    """No other object could answer to the description made of the chosen parts. An object
    near another may show a changed box or shape (covered, nested, joined at an edge), so its
    shape and position could be anything; one with no shape hint could be any shape (but a
    triangle where its outline rules one out: `could_be`); one whose centre lies near a third of
    the image could be in the next cell."""
    own = parts(inst)
    for other in objects:
        if other is inst:
            continue
        theirs, loose = parts(other), in_contact(other, objects)
        if (
            (not colour or theirs[0] == own[0])
            and (not shape or loose or could_be(other, own[1]))
            and (not where or loose or near_grid(other, *size, 0.015) or theirs[2] == own[2])
        ):
            return False
    return True


def could_be(instance: Instance, hint: str | None) -> bool:
    """Whether an object could answer to a shape word (`hint`; None: any shape): it has that
    hint, or none (any shape but those its outline rules out: `geometry.ruled_out`)."""
    theirs = parts(instance)[1]
    if hint is None or theirs == hint:
        return True
    return theirs is None and hint not in ruled_out(instance)


def unclear_colours(objects: list[Instance]) -> set[str]:
    """The basic names a person could give one of the objects whose colour is unclear (a teal
    "blue-green": blue, green and their neighbours); empty when every colour is clear."""
    words = {parts(i)[0] for i in objects}
    return set().union(*(candidates(w) for w in words if not clear_colour(w)))


def named_by_colour(objects: list[Instance]) -> list[Instance]:
    """Objects whose colour is theirs alone, so "the red object" names one."""
    return _unique(objects, lambda i: parts(i)[0])


def count_questions(
    facts: VisualFactsRecord, objects: list[Instance], scene: meaning.Scene | None = None
) -> Asked:
    if not objects:
        return Asked(why_not="no_objects")
    scene = scene or FactsScene(facts, objects)
    total = int(meaning.answer("count", scene, {})["number"])  # the kind's meaning
    out = [
        Question(
            "count",
            {},
            {"number": str(total)},
            each("number", numbers(total, 3)),
            [f"{len(objects)} instances found by the segmenter: {boxes_text(objects)}"],
        )
    ]
    colours = Counter(parts(i)[0] for i in objects)
    unclear = unclear_colours(objects)
    # a colour counted must be clear, and no object of an unclear colour could be given it
    countable = {c: n for c, n in colours.items() if clear_colour(c) and c not in unclear}
    if countable:
        colour, _ = min(countable.items(), key=lambda kv: (-kv[1], kv[0]))
        n = int(meaning.answer("count", scene, {"colour": colour})["number"])
    if countable and len(colours) > 1:
        out.append(
            Question(
                "count",
                {"colour": colour},
                {"number": str(n)},
                each("number", numbers(n, 3)),
                [
                    f"{n} instances with the attribute {colour}: "
                    + boxes_text([i for i in objects if parts(i)[0] == colour])
                ],
            )
        )
    return Asked(out)


def _unique(objects: list[Instance], key: Callable[[Instance], object]) -> list[Instance]:
    counts = Counter(key(i) for i in objects)
    return [i for i in objects if counts[key(i)] == 1]


def named(colour: str, key: str = "object") -> Slots:
    """The slot that names an object by its colour (`object`, or `other` beside it)."""
    return {key: colour}


def name(colour: str) -> str:
    """An object's name in English (for evidence)."""
    return meaning.en.name(named(colour))


def separate(objects: list[Instance], size: tuple[float, float], margin: float = 2.0) -> bool:
    """Whether the regions found look like separate objects rather than the parts of a scene:
    none touches the image's border or covers a quarter of it, and none comes near more than
    one other. (A photograph's or a drawing's regions mostly do; counting, comparing or
    relating them as objects would make weak questions.)"""
    width, height = size
    for inst in objects:
        x0, y0, x1, y1 = inst.box
        if min(x0, y0, width - x1, height - y1) < margin or inst.mask_area > width * height / 4:
            return False
        if sum(not apart(o, inst) for o in objects if o is not inst) > 1:
            return False
    return True


def clear_objects(objects: list[Instance], size: tuple[float, float]) -> list[Instance]:
    """Objects whose box and shape hint are their own (no other near) and whose centre is
    clear of the grid lines."""
    return [i for i in objects if not in_contact(i, objects) and not near_grid(i, *size)]


def position_questions(draw: Draw, objects: list[Instance], size: tuple[float, float]) -> Asked:
    out = []
    clear = [i for i in clear_objects(objects, size) if alone(i, objects, size, True, True, False)]
    for inst in clear[:2]:
        colour, shape, where = parts(inst)
        slots, key = {"colour": colour, "shape": shape or ""}, {"position": where}
        out.append(
            Question(
                "position",
                slots,
                key,
                each("position", pick(draw(slots, key), POSITIONS, {where}, 3)),
                [
                    f"{colour} {shape or ''} instance at {box_text(inst)}, position {where}".replace(
                        "  ", " "
                    )
                ],
            )
        )
    return asked(out, "no_clear_object" if objects else "no_objects")


def colour_questions(draw: Draw, objects: list[Instance], size: tuple[float, float]) -> Asked:
    out = []
    found = [
        i
        for i in clear_objects(objects, size)
        if alone(i, objects, size, False, True, True) and clear_colour(parts(i)[0])
    ]
    for inst in found[:2]:
        colour, shape, where = parts(inst)
        slots, key = {"shape": shape or "", "position": where}, {"colour": colour}
        rng = draw(slots, key)
        out.append(
            Question(
                "colour",
                slots,
                key,  # never beside a name a person could also give it
                each("colour", pick(rng, COLOURS, {colour} | neighbours(colour), 3)),
                [f"instance at {box_text(inst)} with the attribute {colour}"],
            )
        )
    if not out and any(not clear_colour(parts(i)[0]) for i in objects):
        return Asked(why_not="unclear_colour")
    return asked(out, "no_clear_object" if objects else "no_objects")


def size_questions(objects: list[Instance]) -> Asked:
    """Largest / smallest of all objects, asked only when that object's colour names it alone and
    it stands clear of the next one; the other options are other objects named by colour. An
    object near another may be partly hidden: it counts at the size of its whole box."""
    if len(objects) < 2:
        return Asked(why_not="one_object" if objects else "no_objects")
    colours = Counter(parts(i)[0] for i in objects)
    ranked = sorted(objects, key=lambda i: -i.mask_area)

    def most(inst: Instance) -> float:
        x0, y0, x1, y1 = inst.box
        return (x1 - x0) * (y1 - y0) if in_contact(inst, objects) else inst.mask_area

    out = []
    for word, extreme in (("largest", ranked[0]), ("smallest", ranked[-1])):
        others = [i for i in objects if i is not extreme]
        clear = (
            extreme.mask_area >= 1.3 * max(most(i) for i in others)
            if word == "largest"
            else 1.3 * extreme.mask_area <= min(i.mask_area for i in others)
        )
        runner_up = (
            max(others, key=lambda i: i.mask_area)
            if word == "largest"
            else min(others, key=lambda i: i.mask_area)
        )
        if colours[parts(extreme)[0]] != 1 or in_contact(extreme, objects) or not clear:
            continue
        options = sorted(
            {parts(i)[0] for i in objects if colours[parts(i)[0]] == 1} - {parts(extreme)[0]}
        )[:3]
        if not options:
            continue
        answer = name(parts(extreme)[0])
        out.append(
            Question(
                "size",
                {"extreme": word},
                named(parts(extreme)[0]),
                [named(c) for c in options],
                [f"{answer} covers {image_area(extreme)} pixels, the next {image_area(runner_up)}"],
            )
        )
    return asked(out, "no_clear_margin")


def relation_questions(
    objects: list[Instance], scene: meaning.Scene | None = None, margin: float = 3.0
) -> Asked:
    """Left/right only for boxes apart horizontally (by `margin` pixels) that overlap vertically
    (by as much, so above/below are false), and above/below the other way round; objects near
    another (their boxes may be changed) are not asked."""
    # the three largest as the describer ranks them (`describe.in_order`: one size by place)
    own = [i for i in named_by_colour(objects) if not in_contact(i, objects)][:3]
    own.sort(key=lambda i: parts(i)[0])  # pairs in colour order: near-equal areas may swap
    scene = scene or FactsScene(None, objects)
    out = []
    for a, b in [(own[i], own[j]) for i in range(len(own)) for j in range(i + 1, len(own))][:2]:
        gap_x = max(a.box[0], b.box[0]) - min(a.box[2], b.box[2])
        gap_y = max(a.box[1], b.box[1]) - min(a.box[3], b.box[3])
        apart_x, apart_y = gap_x >= margin, gap_y >= margin
        if apart_x == apart_y or apart_x and gap_y > -margin or apart_y and gap_x > -margin:
            continue  # apart on both axes or neither, or not plainly level on the other
        slots = named(parts(a)[0]) | named(parts(b)[0], "other")
        try:  # the kind's meaning: the one side of `b` that `a` lies wholly on
            relation = str(meaning.answer("relative_position", scene, slots)["relation"])
        except meaning.NoAnswer:
            continue
        # the other side on that axis, then the two sides of the other axis
        axis = RELATIONS[:2] if relation in RELATIONS[:2] else RELATIONS[2:]
        wrong = [*(r for r in axis if r != relation), *(r for r in RELATIONS if r not in axis)]
        out.append(
            Question(
                "relative_position",
                slots,
                {"relation": relation},
                each("relation", wrong),
                [f"boxes {box_text(a)} and {box_text(b)}"],
            )
        )
    if len(objects) < 2:
        return Asked(why_not="one_object" if objects else "no_objects")
    return asked(out, "no_clear_pair")
