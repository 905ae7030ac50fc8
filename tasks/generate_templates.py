"""The template generator: questions built straight from an image's facts, with answers known
from those facts, and distractors from the same image's other facts or from other images.
It needs no LLM: the offline default, and a cheap second source beside an LLM."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from benchfoundry.ids import content_hash
from benchfoundry.records import Instance, OcrLine, VisualFactsRecord
from benchfoundry.taxonomy import Taxonomy
from tasks.generate_drafts import Draft

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
    """Instances that are objects, not the glyphs of text an OCR line already covers."""

    def inside(inst: Instance, line: OcrLine) -> bool:
        x0, y0, x1, y1 = inst.box
        lx0, ly0, lx1, ly1 = line.box
        overlap = max(0.0, min(x1, lx1) - max(x0, lx0)) * max(0.0, min(y1, ly1) - max(y0, ly0))
        return overlap >= 0.5 * max(1.0, (x1 - x0) * (y1 - y0))

    return [
        i
        for i in facts.instances
        if len(i.attributes) >= 3 and not any(inside(i, line) for line in facts.ocr_lines)
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


def position_questions(
    rng: random.Random, objects: list[Instance]
) -> list[tuple[str, str, list[str], list[str]]]:
    out = []
    for inst in _unique(objects, lambda i: parts(i)[:2])[:2]:
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
    rng: random.Random, objects: list[Instance]
) -> list[tuple[str, str, list[str], list[str]]]:
    out = []
    for inst in _unique(objects, lambda i: (parts(i)[1], parts(i)[2]))[:2]:
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
    named = _unique(objects, lambda i: parts(i)[0])
    if len(named) < 2:
        return []
    ranked = sorted(named, key=lambda i: -i.mask_area)[:4]
    out = []
    if ranked[0].mask_area >= 1.3 * ranked[1].mask_area:
        names = [_name(parts(i)[0], None) for i in ranked]
        out.append(
            (
                "Which object is the largest in the image?",
                names[0],
                names[1:],
                [f"{names[0]} covers {ranked[0].mask_area} pixels, the next {ranked[1].mask_area}"],
            )
        )
    if ranked[-1].mask_area * 1.3 <= ranked[-2].mask_area:
        names = [_name(parts(i)[0], None) for i in ranked]
        out.append(
            (
                "Which object is the smallest in the image?",
                names[-1],
                names[:-1],
                [
                    f"{names[-1]} covers {ranked[-1].mask_area} pixels, the next {ranked[-2].mask_area}"
                ],
            )
        )
    return out


def relation_questions(
    objects: list[Instance], width_hint: float
) -> list[tuple[str, str, list[str], list[str]]]:
    named = sorted(_unique(objects, lambda i: parts(i)[0]), key=lambda i: -i.mask_area)[:3]
    margin = 0.08 * width_hint
    out = []
    for a, b in [(named[i], named[j]) for i in range(len(named)) for j in range(i + 1, len(named))][
        :2
    ]:
        ax, ay = (a.box[0] + a.box[2]) / 2, (a.box[1] + a.box[3]) / 2
        bx, by = (b.box[0] + b.box[2]) / 2, (b.box[1] + b.box[3]) / 2
        dx, dy = ax - bx, ay - by
        if abs(dx) >= max(abs(dy), margin) * 1.5:
            relation = RELATIONS[0] if dx < 0 else RELATIONS[1]
        elif abs(dy) >= max(abs(dx), margin) * 1.5:
            relation = RELATIONS[2] if dy < 0 else RELATIONS[3]
        else:
            continue
        first, second = _name(parts(a)[0], None), _name(parts(b)[0], None)
        out.append(
            (
                f"Where is {first} relative to {second}?",
                f"{relation} it",
                [f"{r} it" for r in RELATIONS if r != relation],
                [f"centres {round(ax)},{round(ay)} and {round(bx)},{round(by)}"],
            )
        )
    return out


def text_questions(
    rng: random.Random, facts: VisualFactsRecord, other_lines: Sequence[str]
) -> list[tuple[str, str, list[str], list[str]]]:
    lines = [line.text for line in facts.ocr_lines if 2 <= len(line.text) <= 60]
    if not lines:
        return []
    correct = max(lines, key=lambda t: (len(t), t))
    pool = [t for t in other_lines if t not in lines and 2 <= len(t) <= 60]
    distractors = _pick(rng, pool, {correct}, 3)
    words = correct.split()
    while len(distractors) < 3 and len(words) > 1:  # too few other texts: reorder the words
        variant = " ".join(words[len(distractors) + 1 :] + words[: len(distractors) + 1])
        if variant not in distractors and variant != correct:
            distractors.append(variant)
        else:
            break
    if len(distractors) < 1:
        return []
    return [
        ("Which text is written in the image?", correct, distractors, [f'OCR line "{correct}"'])
    ]


def template_drafts(
    facts: VisualFactsRecord, taxonomy: Taxonomy, other_lines: Sequence[str], seed: int = 0
) -> list[Draft]:
    """Template questions for one image, for every dimension of the taxonomy that lists them."""
    rng = random.Random(content_hash({"image": facts.image_id, "seed": seed}))
    objects = objects_of(facts)
    width = max((i.box[2] for i in facts.instances), default=100.0)
    made = {
        "count": count_questions(facts, objects),
        "position": position_questions(rng, objects),
        "colour": colour_questions(rng, objects),
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
