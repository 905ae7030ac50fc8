"""Every template kind is one registry entry: it renders in English and in Chinese, and each kind
of scene answers it (the facts that write keys, the evidence reader's reading, a bench's truth)
with the option this table states, the same drawing described three ways."""

from __future__ import annotations

import json

import pytest

from benchfoundry import meaning
from benchfoundry.core.records import Instance, OcrLine, SegmentRecord, VisualFactsRecord
from benchfoundry.core.taxonomy import TEMPLATE_KINDS, load_taxonomy
from benchfoundry.devtools.clip_truth import ClipTruthScene, step_slots
from benchfoundry.devtools.truth_scene import TruthScene
from benchfoundry.evidence.reading import Reading
from benchfoundry.evidence.reading import Thing as Read
from benchfoundry.evidence.text import Line
from benchfoundry.tasks.generate.facts_scene import FactsScene, SegmentsScene
from benchfoundry.tasks.qc.evidence import ReadingScene

# One drawing (384 x 288): colour, shape, box, area shown, place; and a line of text.
DRAWN = [
    ("red", "square", (30, 20, 110, 100), 5500, "top left"),  # a yellow square inside it
    ("yellow", "square", (55, 45, 85, 75), 900, "top left"),
    ("blue", "circle", (280, 40, 340, 100), 2827, "top right"),
    ("green", "triangle", (40, 190, 100, 250), 1800, "bottom left"),
    ("green", "square", (160, 200, 200, 240), 1600, "bottom center"),
]
HINT = {"square": "rectangular", "circle": "round", "triangle": "triangular"}
TEXT = ("HELLO", (150, 130, 230, 160))


def facts_scene() -> FactsScene:
    instances = [
        Instance(box=list(box), mask_area=area, label=None, dense_caption=None, score=1.0,
                 attributes=[colour, HINT[shape], shape, "medium", where])
        for colour, shape, box, area, where in DRAWN
    ]  # fmt: skip
    facts = VisualFactsRecord(
        image_id="i", config_hash="c", captions=[], instances=instances, extractors=[],
        ocr_lines=[OcrLine(text=TEXT[0], box=list(TEXT[1]), score=0.99)],
    )  # fmt: skip
    return FactsScene(facts, instances, (384.0, 288.0))


def reading_scene() -> ReadingScene:
    things = [Read(c, s, b, a, w) for c, s, b, a, w in DRAWN]
    return ReadingScene(Reading(things, (384, 288), "white", 1, (Line(*TEXT),)))


def truth_scene() -> TruthScene:
    objects = [
        {"shape": s, "colour": c, "size": "medium", "box": list(b),
         "center": [(b[0] + b[2]) // 2, (b[1] + b[3]) // 2]}
        for c, s, b, _, _ in DRAWN
    ]  # fmt: skip
    text = [{"text": TEXT[0], "box": list(TEXT[1])}]
    return TruthScene({"width": 384, "height": 288, "objects": objects, "text_lines": text})


def _segment(order: int, verb: str, noun: str) -> SegmentRecord:
    return SegmentRecord(
        segment_id=f"v-{order}", clip_id="v", video="v.mp4", start=1.5 * order,
        end=1.5 * order + 1.5, label=f"{verb} {noun}", family=verb, order=order,
        source="segments.csv", source_kind="videos:segments", frames=["f"], frame_times=[0.0],
        placeholders=[], noun=noun,
    )  # fmt: skip


STEPS = [("lift-up", "red square", (0.5, 0.5), (0.5, 0.2)),
         ("move-left", "blue circle", (0.6, 0.5), (0.3, 0.5)),
         ("put-down", "red square", (0.5, 0.2), (0.5, 0.5))]  # fmt: skip


def clip_scenes(start: float, end: float) -> dict:
    drawn = [
        {"start": 1.5 * k, "end": 1.5 * k + 1.5, "box": False, "from": [*a, 1.0, True],
         "to": [*b, 1.0, True], "thing": dict(zip(("colour", "shape"), noun.split(), strict=True))}
        for k, (_, noun, a, b) in enumerate(STEPS)
    ]  # fmt: skip
    segments = [_segment(k, verb, noun) for k, (verb, noun, _, _) in enumerate(STEPS)]
    parts = [(s, {"label": s.label, "verb": s.family, "action_noun": s.noun}) for s in segments]
    truth = [meaning.Step(d["start"], d["end"], step_slots(d, "segments")) for d in drawn]
    return {
        "facts": SegmentsScene(parts, start, end),
        "truth": ClipTruthScene(truth, start, end),
    }


def action(k: int) -> dict[str, str]:
    verb, noun, _, _ = STEPS[k]
    return {"label": f"{verb} {noun}", "verb": verb, "action_noun": noun}


def order(*ks: int) -> dict[str, str]:
    return {"labels": json.dumps([action(k)["label"] for k in ks]),
            "actions": json.dumps([action(k) for k in ks])}  # fmt: skip


def objects(*colours: str) -> list[dict[str, str]]:
    return [{"object": c} for c in colours]


def each(key: str, *values: str) -> list[dict[str, str]]:
    return [{key: v} for v in values]


# kind: (slots, options, the option each scene's answer says: facts, reading, truth; None where
# the scene cannot tell, as the evidence reader cannot tell contact)
PICTURES = {
    "count": ({"colour": "green"}, each("number", "2", "3"), (0, 0, 0)),
    "position": ({"colour": "blue"}, each("position", "top right", "center"), (0, 0, 0)),
    "colour": ({"position": "top right"}, each("colour", "red", "blue"), (1, 1, 1)),
    "size": ({"extreme": "largest"}, objects("blue", "red"), (1, 1, 1)),
    "relative_position": (
        {"object": "blue", "other": "red"},
        each("relation", "to the left of", "to the right of", "above"),
        (1, 1, 1),
    ),
    "read_text": ({}, each("text", "HALLO", "HELLO"), (1, 1, 1)),
    "identity": ({"position": "top right"}, each("noun", "square", "circle"), (1, 1, 1)),
    "contain": ({"object": "red"}, objects("blue", "yellow"), (1, None, 1)),
    "overlap": ({"object": "red"}, objects("blue", "yellow"), (1, None, 1)),
    "touch": ({"object": "red"}, objects("yellow", "blue"), (0, None, 0)),
    "compare_counts": (
        {"object": "green", "other": "red"},
        [
            {"fixed": "more", "colour": "green"},
            {"fixed": "more", "colour": "red"},
            {"fixed": "as_many"},
        ],
        (0, 0, 0),
    ),  # fmt: skip
    "most_common_colour": ({}, each("colour", "red", "green"), (1, 1, 1)),
    "remove_and_count": ({"colour": "green"}, each("number", "3", "2"), (0, 0, 0)),
    "count_beside": (
        {"side": "to the left of", "object": "blue"},
        each("number", "3", "4"),
        (1, 1, 1),
    ),
    "which_object": ({"side": "below", "object": "blue"}, objects("red", "green"), (1, 1, 1)),
    "scene_content": ({}, each("fixed", "several_objects_no_text", "objects_and_text"), (1, 1, 1)),
    "dominant_colour": ({}, each("colour", "green", "red"), (1, 1, 1)),
    "layout": ({"axis": "y"}, each("fixed", "top_only", "both_halves"), (1, 1, 1)),
    "count_shape": ({"noun": "square"}, each("number", "3", "2"), (0, 0, 0)),
    "shape_colour": ({"noun": "circle"}, each("colour", "blue", "red"), (0, 0, 0)),
    "read_word": ({}, each("text", "HELLO", "WORLD"), (0, 0, 0)),
}
# kind: (slots, options, the stretch shown, the option facts and truth say)
CLIPS = {
    "action_label": ({}, [action(1), action(0)], (1.5, 3.0), (0, 0)),
    "next_action": ({}, [action(1), action(2)], (0.0, 3.0), (1, 1)),
    "action_order": (order(2, 0, 1), [order(0, 2, 1), order(0, 1, 2)], (0.0, 4.5), (1, 1)),
}


def test_the_registry_holds_every_kind_the_taxonomies_name():
    assert set(PICTURES) | set(CLIPS) == set(meaning.KINDS)
    assert set(TEMPLATE_KINDS) <= set(meaning.KINDS)
    seed = {d.id: d.templates for d in load_taxonomy("seed_bench").leaves()}
    for name in TEMPLATE_KINDS:
        assert name in seed[meaning.KINDS[name].dimension], name


def _picked(name, read, options):
    fit = [k for k, o in enumerate(options) if meaning.fits(name, read, o)]
    return fit[0] if len(fit) == 1 else fit or None


@pytest.mark.parametrize("name", sorted(meaning.KINDS))
def test_every_kind_is_written_in_each_language_and_answered_by_each_scene(name):
    slots, options, *rest = PICTURES.get(name) or CLIPS[name]
    english = meaning.written(name, slots, options, "en")
    chinese = meaning.written(name, slots, options, "zh")
    assert english and chinese, name
    assert all(t.isascii() for t in [english[0], *english[1]])
    assert any("\u4e00" <= ch <= "\u9fff" for ch in chinese[0])
    if name in CLIPS:
        scenes = clip_scenes(*rest[0])
        expected = dict(zip(("facts", "truth"), rest[1], strict=True))
    else:
        scenes = {"facts": facts_scene(), "reading": reading_scene(), "truth": truth_scene()}
        expected = dict(zip(("facts", "reading", "truth"), rest[0], strict=True))
    for kind, scene in scenes.items():
        read = meaning.answer(name, scene, slots)
        assert _picked(name, read, options) == expected[kind], (kind, read)


def test_an_identity_keyed_by_a_label_is_judged_by_its_name():
    """A recogniser's label is the `name` slot everywhere: the facts that carry it answer by it,
    and a reading that names shapes only has no verdict on it (it flagged such keys before)."""
    facts = facts_scene()
    labelled = [i.model_copy(update={"label": "ball"}) if i.attributes[0] == "blue" else i
                for i in facts.instances]  # fmt: skip
    record = VisualFactsRecord(image_id="i", config_hash="c", captions=[], instances=labelled,
                               ocr_lines=[], extractors=[])  # fmt: skip
    ask = {"position": "top right"}
    options = each("name", "ball", "box")
    read = meaning.answer("identity", FactsScene(record, labelled, (384.0, 288.0)), ask)
    assert _picked("identity", read, options) == 0
    read = meaning.answer("identity", reading_scene(), ask)
    assert [meaning.fits("identity", read, o) for o in options] == [None, None]


def test_a_thing_of_unclear_colour_leaves_colour_counts_unknown():
    """The reader names no colour where two names are near (None): that thing could be any colour,
    so counts by colour are unknown (no verdict, not a count one short), while what is asked
    without a colour is still answered."""
    things = [Read(c, s, b, a, w) for c, s, b, a, w in DRAWN]
    things[3] = Read(None, "triangle", DRAWN[3][2], DRAWN[3][3], DRAWN[3][4])  # the green one
    scene = ReadingScene(Reading(things, (384, 288), "white", 1, (Line(*TEXT),)))
    for colour in ("green", "blue"):
        with pytest.raises(meaning.Unsure):
            meaning.answer("count", scene, {"colour": colour})
    assert meaning.answer("count", scene, {}) == {"number": "5"}
