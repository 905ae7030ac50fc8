"""Template kinds on hand-made facts: how objects meet, the interaction, identity, reasoning and
scene questions, and the reasons a dimension gets none."""

from benchfoundry.core.records import ExtractorInfo, Instance, OcrLine, VisualFactsRecord
from benchfoundry.core.taxonomy import load_taxonomy
from benchfoundry.extractors.describe import FLAT
from benchfoundry.tasks.generate.geometry import in_contact, relation
from benchfoundry.tasks.generate.template_questions import NOT_ASKED, template_drafts

SIZE = (384.0, 288.0)


def _inst(box, colour, shape=None, area=None, where="center", flat=True):
    """A hand-made instance: a flat-coloured shape unless `flat` is False (a photo's region)."""
    x0, y0, x1, y1 = box
    full = (x1 - x0) * (y1 - y0)
    area = area or {"round": 0.785, "rectangular": 1.0, "triangular": 0.5, None: 0.7}[shape] * full
    named = {"round": "circle", "rectangular": "square", "triangular": "triangle"}.get(shape)
    attributes = [
        colour,
        *([shape, named] if shape else []),
        *([FLAT] if flat else []),
        "medium",
        where,
    ]
    return Instance(
        box=[float(v) for v in box],
        mask_area=int(area),
        label=None,
        attributes=attributes,
        dense_caption=None,
        score=0.9,
    )


def _facts(instances, lines=(), second=None, second_lines=None):
    """Facts whose second readings found the same (unless `second`/`second_lines` say else)."""
    read = [OcrLine(text=t, box=b, score=0.9) for t, b in lines]
    return VisualFactsRecord(
        image_id="f" * 64,
        config_hash="c",
        captions=[],
        instances=instances,
        ocr_lines=read,
        extractors=[
            ExtractorInfo(role=role, backend="b", model=None, version="1", config_hash="c")
            for role in ("segmenter", "ocr", "second_segmenter", "second_ocr")
        ],
        second_instances=instances if second is None else second,
        second_ocr_lines=read
        if second_lines is None
        else [OcrLine(text=t, box=b, score=0.9) for t, b in second_lines],
    )


def test_how_objects_meet_is_read_from_boxes_hints_and_areas():
    square = _inst((100, 100, 160, 160), "red", "rectangular")
    beside = _inst((161, 115, 191, 145), "blue", "round")
    assert relation(square, beside) == relation(beside, square) == "touches"
    off_centre = _inst((161, 150, 201, 190), "blue", "round")  # its side's middle misses
    assert relation(square, off_centre) == "unclear"
    bitten = _inst((100, 100, 160, 160), "red", None, area=3000)
    on_top = _inst((140, 140, 190, 190), "green", "rectangular")
    assert relation(bitten, on_top) == "overlaps"
    outer = _inst((100, 100, 200, 200), "red", "rectangular", area=9600)
    inner = _inst((140, 140, 160, 160), "yellow", "round")
    assert relation(outer, inner) == "contains" and relation(inner, outer) == "inside"
    in_corner = _inst((104, 104, 118, 118), "yellow", "round")  # in the box, not the circle
    assert relation(_inst((100, 100, 200, 200), "red", "round"), in_corner) != "contains"
    ring = _inst((99, 99, 191, 170), "purple", None, area=2000)  # a blurred edge joined around
    assert relation(ring, beside) == "unclear"
    # a dot too few pixels across to name a shape (a 4 px square in a 96 px icon) is inside;
    # a region with no shape that is large enough to have one is not known to be
    dot = _inst((140, 140, 145, 145), "yellow", None, area=25)
    assert relation(outer, dot) == "contains" and relation(dot, outer) == "inside"
    blob = _inst((130, 130, 170, 170), "yellow", None)
    assert relation(outer, blob) == "unclear"
    far = _inst((300, 20, 340, 60), "black", "rectangular")
    assert relation(square, far) == "apart"
    assert in_contact(square, [square, beside, far]) and not in_contact(far, [square, far])


def _kinds(drafts):
    return {d.generator.removeprefix("template:"): d for d in drafts}


def test_interaction_questions_name_one_partner_and_wrong_options_apart():
    objects = [
        _inst((100, 100, 200, 200), "red", "rectangular", area=9600, where="center"),
        _inst((140, 140, 160, 160), "yellow", "round", where="center"),
        _inst((20, 20, 60, 60), "blue", "triangular", where="top left"),
        _inst((300, 200, 340, 240), "green", "round", where="bottom right"),
    ]
    made = template_drafts(_facts(objects), load_taxonomy("seed_bench"), [], size=SIZE)
    contain = _kinds(made.drafts)["contain"]
    assert contain.question == "Which object is inside the red object?"
    assert contain.correct == "the yellow object" and contain.dimension == "instance_interaction"
    assert {"the blue object", "the green object"} <= set(contain.distractors)
    assert len(contain.distractors) == 3 and "the red object" not in contain.distractors
    assert "inside the first's box and shape" in contain.evidence[0]
    assert "instance_interaction" not in made.not_asked


def test_reasoning_and_scene_questions_rest_on_counts_areas_and_sides():
    objects = [
        _inst((20, 20, 60, 60), "red", "rectangular", where="top left"),
        _inst((20, 200, 60, 240), "red", "round", where="bottom left"),
        _inst((120, 20, 170, 70), "blue", "triangular", where="top left"),
        _inst((300, 120, 330, 150), "red", "rectangular", where="middle right"),
    ]
    made = template_drafts(_facts(objects), load_taxonomy("seed_bench"), [], size=SIZE)
    kinds = _kinds(made.drafts)
    assert kinds["most_common_colour"].correct == "red"
    assert "instances by colour: 1 blue, 3 red" in kinds["most_common_colour"].evidence
    removed = kinds["remove_and_count"]
    colour = removed.question.split()[2]
    assert removed.correct == str(sum(o.attributes[0] != colour for o in objects))
    assert kinds["scene_content"].correct == "several objects and no text"
    assert kinds["dominant_colour"].correct == "red"
    layouts = [d for d in made.drafts if d.generator == "template:layout"]
    assert {d.correct for d in layouts} <= {"both sides", "both halves"} and layouts
    identity = [d for d in made.drafts if d.generator == "template:identity"]
    assert identity and all(
        "an oval" not in d.distractors for d in identity if d.correct == "a circle"
    )
    compare = kinds["compare_counts"]
    assert {compare.correct, *compare.distractors} >= {"as many of each"}
    assert removed.slots == {"colour": colour} and removed.option_slots[0] == {
        "number": removed.correct
    }
    assert {"fixed": "as_many"} in compare.option_slots
    assert kinds["scene_content"].option_slots[0] == {"fixed": "several_objects_no_text"}


def test_every_template_carries_its_parts_and_its_english_is_written_from_them():
    """A draft's question and options are the English of its slots (`benchfoundry.meaning`); the
    candidate keeps the slots with each option, in the options' order after the letter is
    placed."""
    from benchfoundry import meaning
    from benchfoundry.core.letters import index_of
    from benchfoundry.tasks.generate.drafts import Rules, to_candidate

    objects = [
        _inst((100, 100, 200, 200), "red", "rectangular", area=9600, where="center"),
        _inst((140, 140, 160, 160), "yellow", "round", where="center"),
        _inst((20, 20, 60, 60), "blue", "triangular", where="top left"),
        _inst((300, 200, 340, 240), "green", "round", where="bottom right"),
    ]
    lines = [("HARBOUR VIEW", [200.0, 20.0, 360.0, 50.0]), ("OPEN", [250.0, 250.0, 300.0, 280.0])]
    drafts = template_drafts(_facts(objects), load_taxonomy("seed_bench"), [], size=SIZE).drafts
    drafts += template_drafts(_facts([], lines), load_taxonomy("seed_bench"), [], size=SIZE).drafts
    kinds = set()
    for d in drafts:
        kind = d.generator.removeprefix("template:")
        kinds.add(kind)
        assert meaning.question(kind, d.slots, "en") == d.question
        written = [meaning.option(kind, o, "en") for o in d.option_slots]
        assert written == [d.correct, *d.distractors], kind
        c = to_candidate(d, 5, Rules())
        assert [meaning.option(kind, o, "en") for o in c.option_slots] == c.options
        assert c.option_slots[index_of(c.answer)] == d.option_slots[0] and c.slots == d.slots
    assert len(kinds) >= 10 and {"count", "position", "contain", "read_text"} <= kinds
    read = next(d for d in drafts if d.generator == "template:read_text")
    assert read.option_slots[0] == {"text": read.correct}


def test_dimensions_without_support_say_why():
    text_only = _facts([], lines=[("river garden", [40.0, 40.0, 200.0, 70.0])])
    made = template_drafts(text_only, load_taxonomy("seed_bench"), [], size=SIZE)
    assert made.not_asked["instance_interaction"] == "no_objects"
    assert made.not_asked["instance_identity"] == "no_objects"
    assert "scene_understanding" not in made.not_asked
    assert _kinds(made.drafts)["scene_content"].correct == "text but no objects"
    one = template_drafts(
        _facts([_inst((20, 20, 60, 60), "red", "rectangular", where="top left")]),
        load_taxonomy("seed_bench"),
        [],
        size=SIZE,
    )
    assert one.not_asked["instance_interaction"] == "one_object"
    assert one.not_asked["text_understanding"] == "no_text"
    assert set(one.not_asked.values()) <= set(NOT_ASKED)


def test_regions_of_a_scene_are_not_counted_or_related_as_objects():
    photo = [
        _inst((0, 0, 200, 150), "grey", None, where="top left"),  # touches the border
        _inst((120, 100, 260, 220), "brown", "round", where="center"),
        _inst((300, 40, 340, 80), "red", "rectangular", where="top right"),
    ]
    made = template_drafts(_facts(photo), load_taxonomy("seed_bench"), [], size=SIZE)
    for dimension in ("scene_understanding", "visual_reasoning", "instance_interaction"):
        assert made.not_asked[dimension] == "not_separate"
    assert "instances_counting" not in made.not_asked  # counting regions, as it always has


def test_the_outline_of_an_object_is_not_another_object():
    from benchfoundry.extractors.objects import objects_of

    square = _inst((250, 237, 291, 276), "black", "rectangular", where="bottom right")
    ring = _inst((250, 233, 291, 275), "black", None, area=230, where="bottom right")
    assert objects_of(_facts([square, ring])) == [square]


def test_which_object_names_the_one_object_wholly_on_a_side():
    from random import Random

    from benchfoundry.tasks.generate.templates_relation import which_object

    reference = _inst((160, 100, 220, 160), "red", "rectangular", where="center")
    left = _inst((40, 110, 80, 150), "blue", "round", where="middle left")
    right = _inst((280, 40, 320, 80), "green", "triangular", where="top right")
    below = _inst((170, 220, 210, 260), "yellow", "round", where="bottom center")
    objects = [reference, left, right, below]
    made = template_drafts(_facts(objects), load_taxonomy("seed_bench"), [], size=SIZE)
    asked = [d for d in made.drafts if d.generator == "template:which_object"]
    assert len(asked) == 1 and asked[0].dimension == "spatial_relation"
    draft = asked[0]
    side = draft.question.removeprefix("Which object is ").removesuffix(" the red object?")
    key = {"to the left of": left, "to the right of": right, "above": right, "below": below}[side]
    assert draft.correct == f"the {key.attributes[0]} object"
    assert len(draft.distractors) == 3 and "the red object" not in draft.distractors
    assert draft.correct not in draft.distractors
    # Every side of the reference: the green object lies wholly to its right and wholly above it
    # (higher than its top), so it is the key of both.
    found = set()
    for seed in range(12):
        for q in which_object(Random(seed), objects, objects).questions:
            found.add((q.slots["side"], q.correct))
            assert q.question == f"Which object is {q.slots['side']} the red object?"
            assert q.correct not in q.distractors
    assert found == {
        ("to the left of", "the blue object"),
        ("to the right of", "the green object"),
        ("above", "the green object"),
        ("below", "the yellow object"),
    }
    # An object across the reference's edge on a side leaves that side unasked (the purple
    # object is wholly above the red one, and partly to its left), and so do two objects on it.
    across = _inst((120, 20, 180, 60), "purple", "rectangular", where="top center")
    level = _inst((280, 110, 320, 150), "green", "triangular", where="middle right")
    objects = [reference, across, level, below]
    asked = {
        q.question
        for seed in range(12)
        for q in which_object(Random(seed), objects, objects).questions
    }
    assert "Which object is above the red object?" in asked
    assert "Which object is to the left of the red object?" not in asked
    two_left = [reference, left, _inst((40, 140, 80, 180), "black", "round", where="middle left")]
    result = which_object(Random(0), two_left, two_left)
    assert not result.questions and result.why_not == "no_clear_side"


def test_regions_no_recogniser_labelled_are_not_counted_named_or_located():
    """A photograph's regions (not one flat colour, no label) get no object question of any
    kind, and the summary says why; text is still read. A labelled region is an object."""
    photo = [
        _inst((40, 40, 120, 120), "orange", "round", where="top left", flat=False),
        _inst((200, 60, 300, 160), "grey", None, where="top right", flat=False),
    ]
    made = template_drafts(
        _facts(photo, lines=[("GARDEN", [100.0, 200.0, 200.0, 230.0])]),
        load_taxonomy("seed_bench"),
        [],
        size=SIZE,
    )
    assert {d.generator for d in made.drafts} == {"template:read_text"}
    for dimension in ("instances_counting", "instance_location", "instance_attributes"):
        assert made.not_asked[dimension] == "unlabeled_regions"
    assert "unlabeled_regions" in NOT_ASKED
    labelled = [i.model_copy(update={"label": "dog"}) for i in photo]
    made = template_drafts(_facts(labelled), load_taxonomy("seed_bench"), [], size=SIZE)
    counts = {d.question: d.correct for d in made.drafts if d.generator == "template:count"}
    assert counts["How many objects are there in the image?"] == "2"


def test_a_sliver_among_the_objects_stops_every_object_question():
    square = _inst((60, 60, 191, 191), "blue", "rectangular")
    strip = _inst((60, 191, 191, 193), "blue", None, area=262)  # an edge, two pixels high
    made = template_drafts(_facts([square, strip]), load_taxonomy("seed_bench"), [], size=SIZE)
    assert made.drafts == []
    assert made.not_asked["instances_counting"] == "slivers"
    alone = template_drafts(_facts([square]), load_taxonomy("seed_bench"), [], size=SIZE)
    counts = {d.question: d.correct for d in alone.drafts if d.generator == "template:count"}
    assert counts == {"How many objects are there in the image?": "1"}


def test_text_questions_need_a_confident_reading_and_offer_near_words():
    def lines(*read):
        facts = _facts([])
        ocr = [OcrLine(text=t, box=[10.0, 10.0 + 40 * k, 200.0, 40.0 + 40 * k], score=s)
               for k, (t, s) in enumerate(read)]  # fmt: skip
        return facts.model_copy(update={"ocr_lines": ocr, "second_ocr_lines": ocr})

    unsure = template_drafts(lines(("YAMAYA", 0.585)), load_taxonomy("seed_bench"), [], size=SIZE)
    assert unsure.drafts == [] or all(d.generator != "template:read_text" for d in unsure.drafts)
    assert unsure.not_asked["text_understanding"] == "unsure_text"
    sure = template_drafts(lines(("YAMAHA", 0.97)), load_taxonomy("seed_bench"), [], size=SIZE)
    question = _kinds(sure.drafts)["read_text"]
    assert question.correct == "YAMAHA"
    for wrong in question.distractors:  # one confusable letter changed, never a shuffle
        assert sorted(wrong) != sorted("YAMAHA") and wrong != "YAMAHA"
        assert len(wrong) in (5, 6, 7)
    two = template_drafts(
        lines(("Region-based segmentation", 0.99), ("coins markers", 0.95)),
        load_taxonomy("seed_bench"),
        [],
        size=SIZE,
    )
    options = _kinds(two.drafts)["read_text"].distractors
    assert any(w in o.split() for o in options for w in ("coins", "markers")), options
    assert len({o.casefold() for o in options}) == 3


def test_a_line_read_alike_is_keyed_with_the_spaces_between_its_words():
    # a 96 px copy of a bench drawing: PP-OCRv5 read "orange gardensummer" where PP-OCRv4 read
    # "orange garden summer"; alike but for a space, the key is the line with its words apart
    box = [10.0, 20.0, 90.0, 27.0]
    facts = _facts([], [("orange gardensummer", box)], second_lines=[("orange garden summer", box)])
    made = template_drafts(facts, load_taxonomy("seed_bench"), [], size=SIZE)
    assert _kinds(made.drafts)["read_text"].correct == "orange garden summer"


def test_what_the_second_readings_do_not_confirm_is_not_asked():
    """A key rests on two readings: an object the second segmentation did not find (or found
    beside another the first missed), a line the second OCR engine read otherwise or as part of
    a longer token, and an outline that names no shape each hold back what they would key."""
    taxonomy = load_taxonomy("seed_bench")
    red = _inst((40, 40, 100, 100), "red", "round", where="top left")
    blue = _inst((290, 30, 350, 80), "blue", "rectangular", where="top right")
    dot = _inst((300, 200, 310, 210), "yellow", None, area=80, where="bottom right")
    agreed = template_drafts(_facts([red, blue]), taxonomy, [], size=SIZE)
    assert any(d.generator == "template:count" for d in agreed.drafts)
    for second in ([red], [red, blue, dot]):
        made = template_drafts(_facts([red, blue], second=second), taxonomy, [], size=SIZE)
        assert made.drafts == []
        assert made.not_asked["instances_counting"] == "extractors_disagree"
    line = [("HARBOUR", [100.0, 200.0, 220.0, 230.0])]
    other = template_drafts(_facts([], line, second_lines=[("HARB0UR", line[0][1])]), taxonomy, [])
    assert other.not_asked["text_understanding"] == "extractors_disagree"
    longer = template_drafts(
        _facts([], line, second_lines=[("HARBOURSIDE", [100.0, 200.0, 290.0, 230.0])]), taxonomy, []
    )
    assert longer.not_asked["text_understanding"] == "word_fragment"
    runs_on = [*line, ("SIDE", [222.0, 200.0, 280.0, 230.0])]
    cut = template_drafts(_facts([], runs_on), taxonomy, [])
    assert cut.not_asked["text_understanding"] == "word_fragment"
    blob = _inst((40, 200, 140, 260), "red", None, where="bottom left")  # two circles run together?
    unclear = template_drafts(_facts([blob, blue]), taxonomy, [], size=SIZE)
    kinds = {d.generator for d in unclear.drafts}
    assert "template:colour" in kinds and not kinds & {"template:count", "template:position"}
    assert unclear.not_asked["instances_counting"] == "unclear_shapes"


def test_text_over_a_graphic_leaves_what_the_image_contains_unasked():
    """A badge behind the words (a region reaching out of the line's box) or a disc of another
    colour in place of a letter: "text but no objects" would be no plain answer."""
    taxonomy = load_taxonomy("seed_bench")
    line = [("WINDOW", [40.0, 100.0, 300.0, 150.0])]
    letters = [_inst((60 + 40 * k, 105, 90 + 40 * k, 145), "black", None) for k in range(3)]
    plain = template_drafts(_facts(letters, line), taxonomy, [], size=SIZE)
    assert any(d.generator == "template:scene_content" for d in plain.drafts)
    badge = _inst((30, 92, 310, 158), "red", "rectangular")
    disc = _inst((180, 102, 226, 148), "orange", "round")
    for graphic in (badge, disc):
        made = template_drafts(_facts([*letters, graphic], line), taxonomy, [], size=SIZE)
        assert not any(d.generator == "template:scene_content" for d in made.drafts)
        assert made.kinds["scene_content"].why_not == "text_over_graphic"
    # A picture padded by a margin: the segmenter read "vi" as one black region and "o" with its
    # paper-coloured inside as one grey-white region; neither colour is plainly the letters'
    # and neither is a graphic
    two = [  # in the order the segmenter gave them
        _inst((100, 118, 130, 140), "grey-white", None),
        _inst((60, 110, 90, 145), "black", None),
    ]
    read = template_drafts(_facts(two, line), taxonomy, [], size=SIZE)
    assert any(d.generator == "template:scene_content" for d in read.drafts)


def test_a_questions_options_depend_on_that_question_alone():
    """One question fewer before it leaves a question's options as they were: the red circle
    near a third of the image (its place could be read as the next cell) is not asked about in
    the second picture, and the blue square's position and colour questions, asked second in
    the first picture and first in the second, offer the same options in both."""
    taxonomy = load_taxonomy("seed_bench")
    blue = _inst((300, 210, 350, 260), "blue", "rectangular", where="bottom right")
    green = _inst((170, 120, 214, 164), "green", "triangular", where="center")
    clear_red = _inst((20, 20, 70, 70), "red", "round", where="top left")
    red_on_a_third = _inst((103, 20, 153, 70), "red", "round", where="top center")
    asked = []
    for red in (clear_red, red_on_a_third):
        made = template_drafts(_facts([red, blue, green]), taxonomy, [], size=SIZE)
        blues = {
            d.generator: (d.correct, frozenset(d.distractors))
            for d in made.drafts
            if d.generator in ("template:position", "template:colour")
            and "rectangular" in d.question
        }
        reds = [d for d in made.drafts if "red round" in d.question]
        asked.append((blues, len(reds)))
    (first, reds_first), (second, reds_second) = asked
    assert (reds_first, reds_second) == (1, 0)
    assert first["template:position"][0] == "bottom right" and first["template:colour"][0] == "blue"
    assert first == second
