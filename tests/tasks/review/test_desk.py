"""The review desk's pure parts: the evidence overlay's shapes from a question's evidence and the
image's visual facts, thumbnails and their bounded cache, and a reviewer's pace."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from benchfoundry.core.records import Instance, OcrLine, ReviewRecord, VisualFactsRecord
from benchfoundry.tasks.review.app.evidence import cited_boxes, overlay_shapes
from benchfoundry.tasks.review.app.reviewers import pace, seconds
from benchfoundry.tasks.review.app.thumbnails import (
    ThumbnailCache,
    ThumbnailError,
    parse_width,
    thumbnail,
)


def facts(config: str = "c1", extra: list[Instance] | None = None) -> VisualFactsRecord:
    def inst(box, colour, shape="round"):
        return Instance(box=box, mask_area=100, label=None, attributes=[colour, shape, "middle"],
                        dense_caption=None, score=1.0)  # fmt: skip

    return VisualFactsRecord(
        image_id="img",
        config_hash=config,
        captions=[],
        instances=[
            inst([10.2, 20.0, 50.4, 60.0], "red"),
            inst([100.0, 20.0, 140.0, 60.0], "grey"),
            inst([200.0, 20.0, 240.0, 60.0], "grey"),
            *(extra or []),
        ],
        ocr_lines=[
            OcrLine(text="OPEN <b>DAILY</b>", box=[5.0, 90.0, 120.0, 110.0], score=0.9),
            OcrLine(text="exit", box=[150.0, 90.0, 190.0, 110.0], score=0.8),
        ],
        extractors=[],
    )


def test_boxes_in_the_evidence_are_found_again_among_the_facts():
    evidence = ["boxes [10, 20, 50, 60] and [300, 300, 310, 310]"]
    assert cited_boxes(evidence) == [(10, 20, 50, 60), (300, 300, 310, 310)]
    shapes = overlay_shapes(evidence, [facts()])
    cited = [s for s in shapes if s["cited"]]
    assert [(s["kind"], s["label"]) for s in cited] == [
        ("instance", "red"),
        ("evidence", "evidence"),
    ]
    assert cited[0]["box"] == [10.2, 20.0, 50.4, 60.0]  # the fact's own box, not the rounded one
    assert len(shapes) == 2 + 2 + 2  # every other instance and text line as context
    assert shapes[:2] == cited  # cited first


def test_an_ocr_line_and_a_count_by_colour_are_cited():
    shapes = overlay_shapes(['OCR line "OPEN <b>DAILY</b>"'], [facts()])
    assert [s["label"] for s in shapes if s["cited"]] == ["OPEN <b>DAILY</b>"]  # as data, not HTML
    counted = overlay_shapes(["2 instances with the attribute grey"], [facts()])
    assert [s["box"][0] for s in counted if s["cited"]] == [100.0, 200.0]
    assert overlay_shapes(["6 instances, 1 of them red"], [facts()])[0]["label"] == "red"


def test_a_count_cites_every_object_it_counted_and_only_those():
    """The count template's own evidence: every object counted is cited (numbered by the page),
    found in the facts record the count was made from; an instance of the same colour that the
    count did not take (not among the objects both readings agree on) stays context."""
    from benchfoundry.tasks.generate.templates import count_questions

    counted = facts().instances  # red, grey, grey
    uncounted = Instance(box=[300.0, 20.0, 340.0, 60.0], mask_area=100, label=None,
                         attributes=["grey", "round", "middle"], dense_caption=None, score=1.0)  # fmt: skip
    stored = [facts("other", [uncounted]).model_copy(update={"instances": [uncounted]}),
              facts("c1", [uncounted])]  # fmt: skip
    every, by_colour = count_questions(stored[1], counted).questions
    shapes = overlay_shapes(every.evidence, stored)
    cited = [s["box"] for s in shapes if s["cited"]]
    assert cited == [
        [10.2, 20.0, 50.4, 60.0],
        [100.0, 20.0, 140.0, 60.0],
        [200.0, 20.0, 240.0, 60.0],
    ]
    assert [s["box"][0] for s in shapes if not s["cited"] and s["kind"] == "instance"] == [300.0]
    shapes = overlay_shapes(by_colour.evidence, stored)
    assert by_colour.slots == {"colour": "grey"}
    assert [s["box"][0] for s in shapes if s["cited"]] == [100.0, 200.0]


def test_the_reasoning_counts_cite_what_they_counted():
    """Counting by colour, after removing a colour and beside an object: each cites the boxes it
    counted, so the overlay draws them (red at 10, greys at 100 and 200)."""
    import random

    from benchfoundry.tasks.generate.templates_reasoning import (
        compare_counts,
        count_beside,
        most_common_colour,
        remove_and_count,
    )

    objects = facts().instances
    stored = [facts()]

    def cited(question) -> list[float]:
        return sorted(s["box"][0] for s in overlay_shapes(question.evidence, stored) if s["cited"])

    (compared,) = compare_counts(random.Random(0), objects, objects).questions
    assert cited(compared) == [10.2, 100.0, 200.0]
    (common,) = most_common_colour(random.Random(0), objects, objects).questions
    assert common.key_slots == {"colour": "grey"} and cited(common) == [100.0, 200.0]
    for seed in range(6):
        (removed,) = remove_and_count(random.Random(seed), objects).questions
        expected = [100.0, 200.0] if removed.slots["colour"] == "red" else [10.2]
        assert cited(removed) == expected
    (beside,) = count_beside(random.Random(0), objects).questions
    n = int(beside.key_slots["number"])
    assert len(cited(beside)) == n + 1  # the reference object and every one counted


def test_the_facts_record_that_matches_the_evidence_is_drawn_and_none_draws_the_boxes_alone():
    other = facts("c2", [Instance(box=[1.0, 1.0, 9.0, 9.0], mask_area=1, label="cup",
                                  attributes=["blue", "x", "y"], dense_caption=None, score=1.0)])  # fmt: skip
    shapes = overlay_shapes(["instance at [1, 1, 9, 9]"], [facts("c1"), other])
    assert [s["label"] for s in shapes if s["cited"]] == ["cup (blue)"]
    alone = overlay_shapes(["instance at [1, 1, 9, 9]"], [])
    assert alone == [{"kind": "evidence", "box": [1.0, 1.0, 9.0, 9.0], "label": "evidence",
                      "cited": True}]  # fmt: skip
    assert overlay_shapes([], []) == []


def _png(size=(200, 100), mode="RGB") -> bytes:
    out = io.BytesIO()
    Image.new(mode, size, (10, 200, 30, 128) if mode == "RGBA" else (10, 200, 30)).save(out, "PNG")
    return out.getvalue()


def test_thumbnails_keep_the_aspect_never_grow_and_keep_transparency():
    media, data = thumbnail(_png(), 50)
    with Image.open(io.BytesIO(data)) as image:
        assert (media, image.format, image.size) == ("image/jpeg", "JPEG", (50, 25))
    media, data = thumbnail(_png(mode="RGBA"), 40)
    with Image.open(io.BytesIO(data)) as image:
        assert (media, image.size, image.mode) == ("image/png", (40, 20), "RGBA")
    with Image.open(io.BytesIO(thumbnail(_png((30, 10)), 320)[1])) as image:
        assert image.size == (30, 10)
    with pytest.raises(ThumbnailError, match="not an image"):
        thumbnail(b"not an image", 50)
    for bad in ("0", "abc", "-5", "4096", "1.5"):
        with pytest.raises(ThumbnailError, match="width in pixels"):
            parse_width(bad)
    assert parse_width("320") == 320


def test_the_thumbnail_cache_drops_the_least_recently_used_past_either_bound():
    cache = ThumbnailCache(max_items=2, max_bytes=10)
    cache.put(("a", 1), ("image/jpeg", b"1234"))
    cache.put(("b", 1), ("image/jpeg", b"1234"))
    assert cache.get(("a", 1)) is not None  # a is now the most recent
    cache.put(("c", 1), ("image/jpeg", b"12"))
    assert cache.get(("b", 1)) is None and len(cache) == 2
    cache.put(("d", 1), ("image/jpeg", b"123456789"))  # over the bytes: all but d go
    assert cache.get(("a", 1)) is None and cache.get(("d", 1)) is not None and len(cache) == 1


def _review(at: str, lead: float | None = None, decision: str = "accept") -> ReviewRecord:
    return ReviewRecord(question_id=at, reviewer="ann", decision=decision, tool="web",
                        candidate_hash="h", decided_at=at, lead_time_s=lead)  # fmt: skip


def test_pace_counts_active_time_only_and_breaks_start_a_new_session():
    assert seconds("2026-12-01T10:00:00.500000000Z") == seconds("2026-12-01T10:00:00Z") + 0.5
    assert seconds("2026-12-01T11:00:00+01:00") == seconds("2026-12-01T10:00:00Z")
    assert seconds("yesterday") is None
    times = ["10:00:00", "10:01:00", "10:02:00", "13:00:00", "13:00:30"]
    leads = [4, 6, 8, 10, 100]
    got = pace(
        [_review(f"2026-12-01T{t}.000Z", lead) for t, lead in zip(times, leads, strict=True)]
    )
    assert got["active_s"] == 150 and got["sessions"] == 2
    assert got["per_hour"] == 72.0  # 3 decisions after an active gap, in 150 s
    assert got["median_lead_time_s"] == 8 and got["decisions"] == 5
    one = pace([_review("2026-12-01T10:00:00Z")])
    assert (one["per_hour"], one["sessions"], one["median_lead_time_s"]) == (None, 1, None)
    assert pace([])["sessions"] == 0
