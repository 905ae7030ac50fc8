"""The visual context: an image's facts as text, all of them or only some parts, within a cap."""

import pytest

from benchfoundry.core.records import Caption, Instance, OcrLine, VisualFactsRecord
from benchfoundry.storage.visual_context import FactsIndex, parts_in_order, parts_label, render


def _facts(
    image_id: str = "img", caption: str = "A red square and the word EXIT."
) -> VisualFactsRecord:
    return VisualFactsRecord(
        image_id=image_id,
        config_hash="c1",
        captions=[Caption(text=caption, backend="composed", model=None)],
        instances=[
            Instance(
                box=[10, 20, 50, 60],
                mask_area=1600,
                label="square",
                attributes=["red", "large"],
                dense_caption=None,
                score=0.9,
            )
        ],
        ocr_lines=[OcrLine(text="EXIT", box=[1, 2, 30, 12], score=0.99)],
        extractors=[],
    )


def test_each_part_shows_its_own_facts_and_nothing_else():
    facts = _facts()
    whole = render(facts)
    assert "Captions:" in whole and "square at (10, 20, 50, 60); red, large" in whole
    assert '"EXIT" at (1, 2, 30, 12)' in whole
    objects = render(facts, parts=["instances"])
    assert (
        objects
        == "Objects (box as x0, y0, x1, y1 in pixels):\n- square at (10, 20, 50, 60); red, large"
    )
    text = render(facts, parts=["ocr"])
    assert text == 'Text in the image:\n- "EXIT" at (1, 2, 30, 12)'
    captions = render(facts, parts=["captions"])
    assert captions == "Captions:\n- A red square and the word EXIT."
    # The order they are named in does not matter: the context reads in one order.
    assert render(facts, parts=["ocr", "captions", "instances"]) == whole


def test_a_part_with_no_facts_says_so():
    empty = _facts().model_copy(update={"ocr_lines": []})
    assert render(empty, parts=["ocr"]) == "(no text among the extracted visual facts)"
    bare = empty.model_copy(update={"captions": [], "instances": []})
    assert render(bare) == "(no visual facts were extracted)"


def test_a_single_part_may_use_the_whole_cap():
    long = "word " * 200
    facts = _facts(caption=long.strip())
    alone = render(facts, max_chars=600, parts=["captions"])
    shared = render(facts, max_chars=600)
    # One long line is cut to a third of the cap beside two other parts, not when shown alone.
    assert len(alone) > 500 and len(shared.splitlines()[1]) <= 200
    assert len(alone) <= 600 + len("Captions:\n")


def test_parts_are_checked_and_labelled():
    assert parts_in_order(["ocr", "instances", "ocr"]) == ("instances", "ocr")
    with pytest.raises(ValueError, match="unknown part"):
        parts_in_order(["pixels"])
    with pytest.raises(ValueError, match="at least one"):
        parts_in_order([])
    assert parts_label(["captions", "instances", "ocr"]) == "facts"
    assert parts_label(["instances"]) == "facts: objects"
    assert parts_label(["ocr", "captions"]) == "facts: captions, text"


def test_an_index_renders_its_parts_for_each_image():
    no_text = _facts("b").model_copy(update={"ocr_lines": []})
    index = FactsIndex([_facts("a"), no_text], max_chars=400, parts=["ocr"])
    assert index.context("a") == 'Text in the image:\n- "EXIT" at (1, 2, 30, 12)'
    assert index.context("b") == "", "nothing of its parts: nothing to read"
    assert index.context("missing") is None
    assert FactsIndex([no_text]).context("b").startswith("Captions:")
