"""The template generator: questions built straight from an image's facts, with answers known
from those facts, and distractors from the same image's other facts or from other images.
It needs no LLM: the offline default, and a cheap second source beside an LLM."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from benchfoundry.core.ids import content_hash
from benchfoundry.core.records import Instance, OcrLine, VisualFactsRecord
from benchfoundry.core.taxonomy import Taxonomy
from benchfoundry.tasks.generate.drafts import Draft

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


def parts(instance: Instance) -> tuple[str, str | None, str]:
    """(colour, shape hint or None, position phrase) from the describer's attributes."""
    attributes = instance.attributes
    shape = next((a for a in attributes[1:-2] if a in SHAPES), None)
    return attributes[0], shape, attributes[-1]


def objects_of(facts: VisualFactsRecord) -> list[Instance]:
    """Instances that are objects, not the glyphs of a text line: an instance mostly inside an
    OCR line of two or more letters or digits. (A shape that OCR misreads as one character is
    still an object.)"""

    def glyph(inst: Instance, line: OcrLine) -> bool:
        x0, y0, x1, y1 = inst.box
        lx0, ly0, lx1, ly1 = line.box
        overlap = max(0.0, min(x1, lx1) - max(x0, lx0)) * max(0.0, min(y1, ly1) - max(y0, ly0))
        return overlap >= 0.5 * max(1.0, (x1 - x0) * (y1 - y0))

    lines = [line for line in facts.ocr_lines if sum(ch.isalnum() for ch in line.text) >= 2]
    return [
        i
        for i in facts.instances
        if len(i.attributes) >= 3 and not any(glyph(i, line) for line in lines)
    ]


def _pick(rng: random.Random, pool: Sequence[str], exclude: set[str], k: int) -> list[str]:
    choices = sorted(set(pool) - exclude)
    rng.shuffle(choices)
    return choices[:k]


def _numbers(correct: int, k: int) -> list[str]:
    near = [n for d in (1, -1, 2, -2, 3, 4) if (n := correct + d) >= 0]
    return [str(n) for n in near[:k]]


def count_questions(
    facts: VisualFactsRecord, objects: list[Instance]
) -> list[tuple[str, str, list[str], list[str]]]:
    if not objects:
        return []
    out = [
        (
            "How many objects are there in the image?",
            str(len(objects)),
            _numbers(len(objects), 3),
            [f"{len(objects)} instances found by the segmenter"],
        )
    ]
    colours = Counter(parts(i)[0] for i in objects)
    colour, n = min(colours.items(), key=lambda kv: (-kv[1], kv[0]))
    if len(colours) > 1:
        out.append(
            (
                f"How many {colour} objects are there in the image?",
                str(n),
                _numbers(n, 3),
                [f"{n} instances with the attribute {colour}"],
            )
        )
    return out


def _unique(objects: list[Instance], key) -> list[Instance]:  # type: ignore[no-untyped-def]
    counts = Counter(key(i) for i in objects)
    return [i for i in objects if counts[key(i)] == 1]


def _name(colour: str, shape: str | None) -> str:
    return f"the {colour} {shape} object" if shape else f"the {colour} object"


def _near_grid(inst: Instance, width: float, height: float, margin: float = 0.04) -> bool:
    """A centre this close to a third of the image could be read as the next cell."""
    cx, cy = (inst.box[0] + inst.box[2]) / 2 / width, (inst.box[1] + inst.box[3]) / 2 / height
    return any(abs(c - edge) < margin for c in (cx, cy) for edge in (1 / 3, 2 / 3))


def position_questions(
    rng: random.Random, objects: list[Instance], size: tuple[float, float]
) -> list[tuple[str, str, list[str], list[str]]]:
    out = []
    clear = [i for i in _unique(objects, lambda i: parts(i)[:2]) if not _near_grid(i, *size)]
    for inst in clear[:2]:
        colour, shape, where = parts(inst)
        out.append(
            (
                f"Where in the image is {_name(colour, shape)}?",
                where,
                _pick(rng, POSITIONS, {where}, 3),
                [
                    f"{colour} {shape or ''} instance at {[round(v) for v in inst.box]}, position {where}".replace(
                        "  ", " "
                    )
                ],
            )
        )
    return out


def colour_questions(
    rng: random.Random, objects: list[Instance], size: tuple[float, float]
) -> list[tuple[str, str, list[str], list[str]]]:
    out = []
    clear = [
        i
        for i in _unique(objects, lambda i: (parts(i)[1], parts(i)[2]))
        if not _near_grid(i, *size)
    ]
    for inst in clear[:2]:
        colour, shape, where = parts(inst)
        thing = f"{shape} object" if shape else "object"
        out.append(
            (
                f"What colour is the {thing} at the {where} of the image?",
                colour,
                _pick(rng, COLOURS, {colour}, 3),
                [f"instance at {[round(v) for v in inst.box]} with the attribute {colour}"],
            )
        )
    return out


def size_questions(objects: list[Instance]) -> list[tuple[str, str, list[str], list[str]]]:
    """Largest / smallest of all objects, asked only when that object's colour names it alone and
    it stands clear of the next one; the other options are other objects named by colour."""
    if len(objects) < 2:
        return []
    colours = Counter(parts(i)[0] for i in objects)
    ranked = sorted(objects, key=lambda i: -i.mask_area)
    out = []
    for word, extreme, runner_up in (
        ("largest", ranked[0], ranked[1]),
        ("smallest", ranked[-1], ranked[-2]),
    ):
        bigger, smaller = (extreme, runner_up) if word == "largest" else (runner_up, extreme)
        if colours[parts(extreme)[0]] != 1 or bigger.mask_area < 1.3 * smaller.mask_area:
            continue
        others = sorted(
            {parts(i)[0] for i in objects if colours[parts(i)[0]] == 1} - {parts(extreme)[0]}
        )[:3]
        if not others:
            continue
        answer = _name(parts(extreme)[0], None)
        out.append(
            (
                f"Which object is the {word} in the image?",
                answer,
                [_name(c, None) for c in others],
                [f"{answer} covers {extreme.mask_area} pixels, the next {runner_up.mask_area}"],
            )
        )
    return out


def relation_questions(
    objects: list[Instance], width_hint: float
) -> list[tuple[str, str, list[str], list[str]]]:
    """Left/right only for boxes apart horizontally that overlap vertically (so above/below are
    false), and above/below the other way round; overlapping or nested boxes are not asked."""
    named = sorted(_unique(objects, lambda i: parts(i)[0]), key=lambda i: -i.mask_area)[:3]
    out = []
    for a, b in [(named[i], named[j]) for i in range(len(named)) for j in range(i + 1, len(named))][
        :2
    ]:
        apart_x = a.box[2] < b.box[0] or b.box[2] < a.box[0]
        apart_y = a.box[3] < b.box[1] or b.box[3] < a.box[1]
        if apart_x and not apart_y:
            relation = RELATIONS[0] if a.box[2] < b.box[0] else RELATIONS[1]
            wrong = [
                RELATIONS[1] if relation == RELATIONS[0] else RELATIONS[0],
                RELATIONS[2],
                RELATIONS[3],
            ]
        elif apart_y and not apart_x:
            relation = RELATIONS[2] if a.box[3] < b.box[1] else RELATIONS[3]
            wrong = [
                RELATIONS[3] if relation == RELATIONS[2] else RELATIONS[2],
                RELATIONS[0],
                RELATIONS[1],
            ]
        else:
            continue
        first, second = _name(parts(a)[0], None), _name(parts(b)[0], None)
        out.append(
            (
                f"Where is {first} relative to {second}?",
                f"{relation} it",
                [f"{r} it" for r in wrong],
                [f"boxes {[round(v) for v in a.box]} and {[round(v) for v in b.box]}"],
            )
        )
    return out


def text_questions(
    rng: random.Random, facts: VisualFactsRecord, other_lines: Sequence[str]
) -> list[tuple[str, str, list[str], list[str]]]:
    """The longest line read, against texts that are not written in the image: its words in
    another order, or with two letters swapped. Drawn from the line alone, so the question (and
    its id) stays the same when a build grows."""
    lines = [line.text for line in facts.ocr_lines if 2 <= len(line.text) <= 60]
    if not lines:
        return []
    correct = max(lines, key=lambda t: (len(t), t))
    written = " ".join(lines).casefold()
    words = correct.split()
    candidates = [" ".join(words[k:] + words[:k]) for k in range(1, len(words))]
    for k in range(1, len(correct) - 1):
        if correct[k].isalpha() and correct[k + 1].isalpha() and correct[k] != correct[k + 1]:
            candidates.append(correct[:k] + correct[k + 1] + correct[k] + correct[k + 2 :])
    distractors: list[str] = []
    for text in candidates:
        if text.casefold() not in written and text.casefold() not in (
            d.casefold() for d in distractors
        ):
            distractors.append(text)
        if len(distractors) == 3:
            break
    if not distractors:
        return []
    return [
        ("Which text is written in the image?", correct, distractors, [f'OCR line "{correct}"'])
    ]


def _image_size(facts: VisualFactsRecord) -> tuple[float, float]:
    """The image's size, as far as the facts tell (the far edges of what was found)."""
    boxes = [i.box for i in facts.instances] + [line.box for line in facts.ocr_lines]
    return (max((b[2] for b in boxes), default=1.0), max((b[3] for b in boxes), default=1.0))


def template_drafts(
    facts: VisualFactsRecord,
    taxonomy: Taxonomy,
    other_lines: Sequence[str],
    seed: int = 0,
    size: tuple[float, float] | None = None,
) -> list[Draft]:
    """Template questions for one image, for every dimension of the taxonomy that lists them."""
    rng = random.Random(content_hash({"image": facts.image_id, "seed": seed}))
    objects = objects_of(facts)
    width = max((i.box[2] for i in facts.instances), default=100.0)
    size = (
        (float(facts.width), float(facts.height)) if hasattr(facts, "width") else _image_size(facts)
    )
    made = {
        "count": count_questions(facts, objects),
        "position": position_questions(rng, objects, size),
        "colour": colour_questions(rng, objects, size),
        "size": size_questions(objects),
        "relative_position": relation_questions(objects, width),
        "read_text": text_questions(rng, facts, other_lines),
    }
    drafts = []
    for dimension in taxonomy.leaves():
        for kind in dimension.templates:
            for question, correct, distractors, evidence in made[kind]:
                drafts.append(
                    Draft(
                        image_id=facts.image_id,
                        dimension=dimension.id,
                        question=question,
                        correct=correct,
                        distractors=distractors,
                        generator=f"template:{kind}",
                        evidence=evidence,
                    )
                )
    return drafts
