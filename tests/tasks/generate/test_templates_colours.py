"""Colour questions and counts by colour on hand-made facts: an object whose colour has no name
people agree on (a teal box, described "blue-green") gets no colour question, is named by no
colour and stops counts by the colours it could be given; options of a colour question never
hold a name a person could give the same object (cyan beside blue)."""

from benchfoundry.core.records import ExtractorInfo, Instance, VisualFactsRecord
from benchfoundry.core.taxonomy import load_taxonomy
from benchfoundry.extractors.describe import FLAT
from benchfoundry.tasks.generate.template_questions import NOT_ASKED, template_drafts

SIZE = (384.0, 288.0)
SHAPE = {"round": "circle", "rectangular": "square"}


def _inst(box: tuple, colour: str, shape: str, where: str) -> Instance:
    x0, y0, x1, y1 = box
    return Instance(
        box=[float(v) for v in box],
        mask_area=int((0.785 if shape == "round" else 1.0) * (x1 - x0) * (y1 - y0)),
        label=None,
        attributes=[colour, shape, SHAPE[shape], FLAT, "medium", where],
        dense_caption=None,
        score=0.9,
    )


def _facts(instances: list[Instance]) -> VisualFactsRecord:
    return VisualFactsRecord(
        image_id="e" * 64,
        config_hash="c",
        captions=[],
        instances=instances,
        ocr_lines=[],
        extractors=[
            ExtractorInfo(role=role, backend="b", model=None, version="1", config_hash="c")
            for role in ("segmenter", "ocr", "second_segmenter", "second_ocr")
        ],
        second_instances=instances,
        second_ocr_lines=[],
    )


RED = _inst((30, 30, 90, 90), "red", "round", "top left")
BLUE = _inst((290, 30, 350, 90), "blue", "rectangular", "top right")
RED_TOO = _inst((30, 200, 90, 260), "red", "round", "bottom left")
TEAL = _inst((290, 200, 350, 260), "blue-green", "rectangular", "bottom right")


def _asked(objects: list[Instance]) -> dict[str, list]:
    made = template_drafts(_facts(objects), load_taxonomy("seed_bench"), [], size=SIZE)
    out: dict[str, list] = {"not_asked": made.not_asked}
    for draft in made.drafts:
        out.setdefault(draft.generator.removeprefix("template:"), []).append(draft)
    return out


def test_a_colour_option_set_never_holds_a_name_a_person_could_also_give():
    asked = _asked([RED, BLUE, RED_TOO])
    keyed = {d.option_slots[0]["colour"]: d for d in asked["colour"]}  # the key's parts first
    assert set(keyed) == {"red", "blue"}
    offered = {k: {o["colour"] for o in d.option_slots} for k, d in keyed.items()}
    assert not offered["blue"] & {"cyan", "purple"} and not offered["red"] & {"orange", "pink"}
    counts = {d.slots.get("colour"): d.option_slots[0]["number"] for d in asked["count"]}
    assert counts == {None: "3", "red": "2"}


def test_an_object_of_unclear_colour_is_counted_but_named_by_no_colour():
    asked = _asked([RED, BLUE, RED_TOO, TEAL])
    assert {d.slots.get("colour") for d in asked["count"]} == {None, "red"}  # red: not blue
    plain = next(d for d in asked["count"] if not d.slots)
    assert plain.option_slots[0] == {"number": "4"}  # the key's parts come first
    keys = {d.option_slots[0]["colour"] for d in asked["colour"]}
    assert keys <= {"red", "blue"} and "blue-green" not in keys
    for kind in ("position", "size", "relative_position", "compare_counts", "dominant_colour"):
        assert kind not in asked, kind
    assert "unclear_colour" in asked["not_asked"].values()
    assert "unclear_colour" in NOT_ASKED


def test_counts_by_colour_wait_for_a_colour_no_unclear_object_could_be_given():
    navy = _inst((290, 200, 350, 260), "blue-purple", "rectangular", "bottom right")
    asked = _asked([BLUE, navy])
    assert {d.slots.get("colour") for d in asked["count"]} == {None}
    assert [d.option_slots[0]["colour"] for d in asked["colour"]] == ["blue"]
