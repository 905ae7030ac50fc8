"""Every template kind, and one image's template drafts for the dimensions of a taxonomy that
list them, with the reason a dimension got none where the image's facts cannot support it."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from benchfoundry import meaning
from benchfoundry.core.ids import content_hash
from benchfoundry.core.records import Instance, OcrLine, VisualFactsRecord
from benchfoundry.core.taxonomy import Taxonomy
from benchfoundry.extractors.agreement import REASONS as DISAGREEMENTS
from benchfoundry.extractors.agreement import agreement
from benchfoundry.extractors.objects import graphic_in_text
from benchfoundry.meaning import kinds
from benchfoundry.tasks.generate.drafts import Draft
from benchfoundry.tasks.generate.facts_scene import FactsScene
from benchfoundry.tasks.generate.geometry import framed
from benchfoundry.tasks.generate.templates import (
    Asked,
    Draw,
    Question,
    Slots,
    colour_questions,
    count_questions,
    position_questions,
    relation_questions,
    separate,
    size_questions,
    unclear_colours,
)
from benchfoundry.tasks.generate.templates_identity import identity_questions
from benchfoundry.tasks.generate.templates_interaction import interaction_questions
from benchfoundry.tasks.generate.templates_reasoning import (
    compare_counts,
    count_beside,
    most_common_colour,
    remove_and_count,
)
from benchfoundry.tasks.generate.templates_relation import which_object
from benchfoundry.tasks.generate.templates_scene import dominant_colour, layout, scene_content
from benchfoundry.tasks.generate.templates_text import text_questions

NOT_ASKED = {
    "no_objects": "no objects were found (or only the glyphs of text)",
    "one_object": "a single object: nothing to compare, relate or tell apart",
    "few_objects": "too few objects for the comparison",
    "one_colour": "the objects are all of one colour",
    "no_text": "no line of text was read",
    "unsure_text": "no line of text was read with confidence (an OCR misreading would be the key)",
    "unlabeled_regions": "the regions found are not recognised objects (no label from a "
    "recogniser, not one flat colour: parts of a photograph), so none is counted, named or located",
    "slivers": "a region found is a sliver (an edge cut into a strip a few pixels wide), so the "
    "objects cannot be counted, named or located with confidence",
    "text_present": "text shares the image with the objects, so 'the objects' is unclear",
    "unclear_objects": "an object lies against a line of text (it may be part of a letter)",
    "no_clear_object": "no object is described alone, clear of the grid lines and of other objects",
    "no_clear_margin": "the counts, sizes or areas compared are too close to call",
    "no_clear_pair": "no two objects stand in a plain relation, named by colours of their own",
    "no_clear_side": "objects lie across the line the question would ask about",
    "no_contact": "no two objects touch, overlap or nest plainly",
    "no_distractor": "nothing to offer as a wrong option",
    "not_separate": "the regions found look like parts of a scene (one touches the border or "
    "covers a quarter of the image), not separate objects",
    **DISAGREEMENTS,
    "text_over_graphic": "a line of text runs over a graphic (a logo's disc in place of a letter), "
    "so whether the image holds objects beside its text has no plain answer",
    "no_single_answer": "by what the question means (`benchfoundry.meaning`), the facts give it "
    "no single answer, or another option is true as well",
    "unclear_colour": "an object's colour has no name people agree on (teal, navy, maroon, olive, "
    "beige...), so no object is named or counted by its colour and that object's colour is not "
    "asked",
}
# What asking each kind takes of the objects, as its entry in `benchfoundry.meaning` says: kinds
# that treat the regions found as separate objects (the first six kinds keep asking about any
# regions, as they always have); kinds whose key counts the objects (not asked where an
# object's outline names no shape: it may be two things run together); kinds that name objects
# by their colours (not asked where an object's colour has no name people agree on); kinds that
# name no object by its description (still asked where a shape may be several things).
NEED_SEPARATE = {k for k, v in kinds.KINDS.items() if kinds.SEPARATE in v.asks}
COUNTING = {k for k, v in kinds.KINDS.items() if kinds.COUNTS in v.asks}
BY_COLOUR = {k for k, v in kinds.KINDS.items() if kinds.BY_COLOUR in v.asks}
UNCLEAR_SAFE = {k for k, v in kinds.KINDS.items() if kinds.ANY_SHAPE in v.asks}


@dataclass(frozen=True)
class Seen:
    """One image's facts, as every template reads them."""

    facts: VisualFactsRecord
    size: tuple[float, float]
    other_lines: Sequence[str]
    seed: int
    objects: list[Instance] = field(default_factory=list)  # both readings' (`agreement`)
    unplain: str | None = None  # why the regions found may not be asked about as objects
    uncounted: str | None = None  # why the objects may not be counted
    lines: list[OcrLine] = field(default_factory=list)  # lines both OCR engines read alike
    unread: str | None = None  # why no line read is a key
    scene: FactsScene | None = None  # the objects and lines as a scene: what the keys mean on

    def content(self) -> str:
        """What the questions are drawn from, never the file: how many objects the two readings
        agreed on and how many lines both OCR engines read alike. The same picture in another
        file (turned by its EXIF tag, re-encoded, resized, padded) reads the same, so it draws
        the same questions and options; a change no person sees must not change what is asked.
        (Not the objects' sizes or places relative to the frame, which a margin changes, nor the
        lines' words, of which an OCR engine may read one more or one fewer.)"""
        return content_hash({"objects": len(self.objects), "lines": len(self.lines)})

    def draw(self, kind: str) -> Draw:
        """Each question of `kind` draws its options from a generator of its own, seeded by the
        image's content, the build's seed, the kind, and the question's slots and key: its
        options depend on that question alone, not on how many questions came before it."""

        def seeded(slots: Slots, key: Slots) -> random.Random:
            identity = {"image": self.content(), "seed": self.seed, "kind": kind}
            return random.Random(content_hash({**identity, "slots": slots, "key": key}))

        return seeded

    def rng(self, kind: str) -> random.Random:
        """A generator of its own for each kind, so a new kind leaves the others' options (and
        question ids) as they were."""
        return random.Random(
            content_hash({"image": self.content(), "seed": self.seed, "kind": kind})
        )


MADE: dict[str, Callable[[Seen], Asked]] = {
    "identity": lambda s: identity_questions(s.draw("identity"), s.objects, s.size),
    "contain": lambda s: interaction_questions(
        "contain", s.draw("contain"), s.objects, s.facts.instances
    ),
    "overlap": lambda s: interaction_questions(
        "overlap", s.draw("overlap"), s.objects, s.facts.instances
    ),
    "touch": lambda s: interaction_questions(
        "touch", s.draw("touch"), s.objects, s.facts.instances
    ),
    "compare_counts": lambda s: compare_counts(
        s.rng("compare_counts"), s.objects, s.facts.instances, s.scene
    ),
    "most_common_colour": lambda s: most_common_colour(
        s.rng("most_common_colour"), s.objects, s.facts.instances, s.scene
    ),
    "remove_and_count": lambda s: remove_and_count(s.rng("remove_and_count"), s.objects, s.scene),
    "count_beside": lambda s: count_beside(s.rng("count_beside"), s.objects, s.scene),
    "scene_content": lambda s: scene_content(s.facts, s.objects, s.scene),
    "dominant_colour": lambda s: dominant_colour(
        s.rng("dominant_colour"), s.facts, s.objects, s.scene
    ),
    "layout": lambda s: layout(s.facts, s.objects, s.size, s.scene),
    "which_object": lambda s: which_object(s.rng("which_object"), s.objects, s.facts.instances),
}


def _first_kinds(seen: Seen) -> dict[str, Asked]:
    """The first six kinds, each question drawing its options from its own generator
    (`Seen.draw`). On regions that are not plainly objects, only text is asked."""
    text = (
        Asked(why_not=seen.unread)
        if seen.unread
        else text_questions(seen.draw("read_text"), seen.facts, seen.lines)
    )
    if seen.unplain:
        kinds = ("count", "position", "colour", "size", "relative_position")
        return {kind: Asked(why_not=seen.unplain) for kind in kinds} | {"read_text": text}
    objects = seen.objects
    made = {
        "count": count_questions(seen.facts, objects, seen.scene),
        "position": position_questions(seen.draw("position"), objects, seen.size),
        "colour": colour_questions(seen.draw("colour"), objects, seen.size),
        "size": size_questions(objects),
        "relative_position": relation_questions(objects, seen.scene),
    }
    return {
        kind: Asked(why_not=why) if (why := held_back(seen, kind)) else asked
        for kind, asked in made.items()
    } | {"read_text": text}


def held_back(seen: Seen, kind: str) -> str | None:
    """Why the two readings do not support asking `kind` about this image, if so: objects the
    readings found differently, shapes that may be several things (only colours and where
    things lie are then asked), counts the readings do not share, or (for what the image
    contains) a text reading they do not share."""
    if seen.unplain:
        return seen.unplain
    if seen.uncounted == "unclear_shapes" and kind not in UNCLEAR_SAFE:
        return seen.uncounted
    if seen.uncounted and kind in COUNTING:
        return seen.uncounted
    if kind in BY_COLOUR and unclear_colours(seen.objects):
        return "unclear_colour"
    if kind == "scene_content" and seen.facts.ocr_lines and seen.unread:
        return seen.unread
    if kind == "scene_content" and graphic_in_text(seen.facts):
        return "text_over_graphic"
    return None


def keyed(kind: str, scene: FactsScene, q: Question) -> Question | None:
    """The question with its key as the kind's meaning reads it from the facts
    (`meaning.answer`); None where the facts give it no single answer, where the template's
    choice of key is not what they say, or where a wrong option says it too."""
    try:
        read = meaning.answer(kind, scene, q.slots)
    except (meaning.NoAnswer, meaning.Unsure):
        return None
    if meaning.fits(kind, read, q.key_slots) is not True:
        return None
    if any(meaning.fits(kind, read, w) for w in q.wrong_slots):
        return None
    if all(isinstance(v, str) for v in read.values()):  # one answer: the key is what it says
        return replace(q, key_slots=dict(read))  # type: ignore[arg-type]
    return q  # any of several is true: the template's pick among them


@dataclass
class TemplateDrafts:
    """One image's template drafts, and for each dimension that got none, why."""

    drafts: list[Draft] = field(default_factory=list)
    not_asked: dict[str, str] = field(default_factory=dict)
    kinds: dict[str, Asked] = field(
        default_factory=dict
    )  # every kind tried: its questions or why not


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
) -> TemplateDrafts:
    """Template questions for one image, for every dimension of the taxonomy that lists them."""
    facts, frame = framed(facts, size or _image_size(facts))  # margins: shares of the image
    agreed = agreement(facts)
    scene = FactsScene(facts, agreed.objects, frame, agreed.lines)
    seen = Seen(
        facts,
        frame,
        other_lines,
        seed,
        agreed.objects,
        agreed.objects_why_not,
        agreed.counts_why_not,
        agreed.lines,
        agreed.lines_why_not,
        scene,
    )
    made = _first_kinds(seen)
    result = TemplateDrafts()
    for dimension in taxonomy.leaves():
        if "segments" in dimension.needs:
            continue  # asked of a clip's segments (templates_temporal), not of a picture
        reasons: Counter[str] = Counter()
        before = len(result.drafts)
        for kind in dimension.templates:
            if kind not in made:
                made[kind] = (
                    Asked(why_not=why)
                    if (why := held_back(seen, kind))
                    else Asked(why_not="not_separate")
                    if kind in NEED_SEPARATE
                    and seen.objects
                    and not separate(seen.objects, seen.size)
                    else MADE[kind](seen)
                )
            asked = made[kind]
            if asked.why_not:
                reasons[asked.why_not] += 1
            for q in asked.questions:
                q = keyed(kind, scene, q)
                if q is None:
                    reasons["no_single_answer"] += 1
                    continue
                result.drafts.append(
                    Draft(
                        image_id=facts.image_id,
                        dimension=dimension.id,
                        question=q.question,
                        correct=q.correct,
                        distractors=q.distractors,
                        generator=f"template:{kind}",
                        evidence=q.evidence,
                        slots=q.slots,
                        option_slots=[q.key_slots, *q.wrong_slots],
                    )
                )
        if dimension.templates and len(result.drafts) == before:
            result.not_asked[dimension.id] = reasons.most_common(1)[0][0]
    result.kinds = made
    return result
