"""Objects a person counts (issue 53, item 4), and readings that do not depend on the image's
size (item 2): the overlap of two translucent shapes is no object; a housing holding lights, and
stripes inside one outline, make the count unaskable; one drawing at 96 px, at its drawn size
and four times as large gives the same regions, names and template questions."""

import random

import numpy as np
from PIL import Image

from benchfoundry.core.records import ExtractorInfo, Instance, VisualFactsRecord
from benchfoundry.core.taxonomy import load_taxonomy
from benchfoundry.devtools.field_pictures import sizes, striped_box, traffic_light, translucent
from benchfoundry.extractors.agreement import agreement
from benchfoundry.extractors.blends import BLEND
from benchfoundry.extractors.describe import describe
from benchfoundry.extractors.objects import objects_of
from benchfoundry.extractors.registry import create
from benchfoundry.tasks.generate.template_questions import template_drafts

PLAIN_SHAPES = ("circle", "square", "triangle")  # a star's points are a pixel wide at 96 px
ROLES = ("segmenter", "ocr", "second_segmenter", "second_ocr")


def _facts(image: Image.Image) -> VisualFactsRecord:
    """Both readings' objects of an image (no text), as the extract stage stores them."""
    first = create("segmenter", "classical").segment(image)
    second = create("second_segmenter", "components").segment(image)
    return VisualFactsRecord(
        image_id="d" * 64,
        config_hash="c",
        captions=[],
        instances=describe(image, first),
        ocr_lines=[],
        extractors=[
            ExtractorInfo(role=role, backend="b", model=None, version="1", config_hash="c")
            for role in ROLES
        ],
        second_instances=describe(image, second),
        second_ocr_lines=[],
    )


def test_the_overlap_of_two_translucent_shapes_is_no_object():
    for k in range(2):
        drawing = translucent(random.Random(f"test:{k}"))
        facts = _facts(drawing.image)
        assert any(BLEND in i.attributes for i in facts.instances)  # the overlap was found
        truth = drawing.truth["objects"]
        assert len(objects_of(facts)) == len(truth), [i.attributes for i in facts.instances]
        made = template_drafts(facts, load_taxonomy("seed_bench"), [], size=drawing.image.size)
        for draft in made.drafts:
            if draft.generator == "template:count" and not draft.slots:
                assert draft.option_slots[0] == {"number": str(len(truth))}


def test_a_housing_holding_lights_and_a_striped_box_are_not_counted():
    for make, reason in ((traffic_light, "holds_objects"), (striped_box, "pattern")):
        drawing = make(random.Random("test"))
        facts = _facts(drawing.image)
        found = agreement(facts)
        made = template_drafts(facts, load_taxonomy("seed_bench"), [], size=drawing.image.size)
        counted = [d for d in made.drafts if d.generator == "template:count"]
        assert not counted and found.counts_why_not in (reason, "extractors_disagree"), (
            found.counts_why_not
        )


def _box(x0: float, y0: float, x1: float, y1: float, colour: str) -> Instance:
    return Instance(
        box=[x0, y0, x1, y1], mask_area=int(0.8 * (x1 - x0) * (y1 - y0)), label=None,
        attributes=[colour, "rectangular", "rectangle", "flat-coloured", "medium", "center"],
        dense_caption=None, score=0.9,
    )  # fmt: skip


def test_why_not_counted_is_said_for_a_housing_and_for_stripes():
    def facts(instances: list[Instance]) -> VisualFactsRecord:
        return VisualFactsRecord(
            image_id="c" * 64, config_hash="c", captions=[], instances=instances, ocr_lines=[],
            extractors=[ExtractorInfo(role=r, backend="b", model=None, version="1",
                                      config_hash="c") for r in ROLES],
            second_instances=instances, second_ocr_lines=[],
        )  # fmt: skip

    housing = _box(100, 40, 160, 220, "black")
    lights = [_box(110, 50 + 60 * k, 150, 90 + 60 * k, c) for k, c in enumerate(("red", "green"))]
    assert agreement(facts([housing, *lights])).counts_why_not == "holds_objects"
    stripes = [_box(100 + 20 * k, 60, 120 + 20 * k, 160, ("red", "white")[k % 2]) for k in range(5)]
    assert agreement(facts(stripes)).counts_why_not == "pattern"
    apart = [_box(40, 40, 90, 90, "red"), _box(200, 40, 250, 90, "blue")]
    assert agreement(facts(apart)).counts_why_not is None


def test_one_drawing_at_three_sizes_gets_the_same_questions_and_keys():
    asked = []
    for drawing in sizes(3, (96, 384, 1536), PLAIN_SHAPES):
        facts = _facts(drawing.image)
        assert len(objects_of(facts)) == len(drawing.truth["objects"])
        made = template_drafts(facts, load_taxonomy("seed_bench"), [], size=drawing.image.size)
        asked.append(
            {
                (d.question, d.correct)
                for d in made.drafts
                if d.generator != "template:remove_and_count"  # its colour is drawn at random
            }
        )
    assert asked[0] and asked[0] == asked[1] == asked[2]


def test_a_small_icon_is_read_as_its_drawing_is():
    drawing = sizes(5, (96, 384), PLAIN_SHAPES)
    regions = [create("segmenter", "classical").segment(d.image) for d in drawing]
    names = [
        [i.attributes[0] for i in describe(d.image, r)]
        for d, r in zip(drawing, regions, strict=True)
    ]
    assert names[0] == names[1]
    shares = [
        sorted(round(r.area / (d.image.width * d.image.height), 2) for r in found)
        for d, found in zip(drawing, regions, strict=True)
    ]
    assert np.allclose(shares[0], shares[1], atol=0.01)


def test_a_drop_shadow_and_a_cartoon_outline_are_no_objects():
    red = _box(40, 40, 100, 100, "red")
    shade = _box(46, 46, 106, 106, "grey")
    shade = shade.model_copy(update={"mask_area": 700})  # the L a shadow shows behind the red
    blue = _box(200, 60, 260, 120, "blue")
    line = _box(195, 55, 265, 125, "black").model_copy(update={"mask_area": 1300})
    facts = VisualFactsRecord(
        image_id="b" * 64, config_hash="c", captions=[], instances=[red, shade, blue, line],
        ocr_lines=[], extractors=[], second_instances=[], second_ocr_lines=[],
    )  # fmt: skip
    assert objects_of(facts) == [red, blue]
    grey_square = _box(150, 150, 210, 210, "grey")  # a grey object of its own is one
    assert grey_square in objects_of(facts.model_copy(update={"instances": [red, grey_square]}))


def test_the_automatic_reviewer_withholds_alike_at_every_size(candidate_record):
    """The automatic reviewer checks a template question's facts in the generator's frame:
    three squares in a row, a hundredth of the picture's width apart (3 px at 384 px, 12 px at
    1,536 px), meet in a chain (a pattern: not counted) at either size."""
    from benchfoundry.tasks.review.stage import on_unplain_regions

    def square(x: float, colour: str, k: float) -> Instance:
        return Instance(
            box=[x * k, 100 * k, (x + 60) * k, 160 * k], mask_area=round(3600 * k * k),
            label=None, attributes=[colour, "rectangular", "square", "flat-coloured", "medium",
                                    "middle left"], dense_caption=None, score=1.0,
        )  # fmt: skip

    withheld = []
    for k in (1.0, 4.0):  # the same drawing at 384 x 288 px and at 1,536 x 1,152 px
        row = [square(40, "red", k), square(103, "blue", k), square(166, "green", k)]
        facts = VisualFactsRecord(
            image_id="e" * 64, config_hash="c", captions=[], instances=row, ocr_lines=[],
            extractors=[ExtractorInfo(role=r, backend="b", model=None, version="1",
                                      config_hash="c") for r in ROLES],
            second_instances=row, second_ocr_lines=[],
        )  # fmt: skip
        question = candidate_record("q", facts.image_id, generator="template:count")
        sizes_ = {facts.image_id: (384 * k, 288 * k)}
        withheld.append(on_unplain_regions([question], {facts.image_id: facts}, sizes_))
    assert withheld == [{"q": "pattern"}, {"q": "pattern"}]
