"""The flag bench's parts that need no build: the packaged corpus it writes with its truth,
the field check of a key at another letter, and pooling two sources' tallies."""

from __future__ import annotations

import json

from benchfoundry.devtools.flag_check import FlagRates
from benchfoundry.devtools.flag_field import doubted, field_truth, write_packaged_corpus
from benchfoundry.devtools.hard_shapes import make_object, scene_truth


def test_the_packaged_corpus_is_written_with_its_truth(tmp_path):
    assert write_packaged_corpus(tmp_path) == 8
    lines = [json.loads(x) for x in (tmp_path / "truth.jsonl").read_text().splitlines()]
    assert {line["scene_id"] for line in lines} >= {"chessboard_RGB", "phantom", "astronaut"}
    assert all((tmp_path / line["file"]).is_file() for line in lines)


def test_a_key_at_another_letter_is_judged_at_that_letter(candidate_record):
    objects = [
        make_object("circle", "red", (60, 60), 30),
        make_object("square", "red", (180, 60), 30),
        make_object("square", "blue", (300, 60), 30),
    ]
    scene = {"scene_id": "s", **scene_truth("plain", 384, 288, objects, [])}
    item = candidate_record(
        "q",
        "i",
        generator="template:count",
        options=["1", "2", "3", "4"],
        answer="B",
        slots={"colour": "red"},
        option_slots=[{"number": "1"}, {"number": "2"}, {"number": "3"}, {"number": "4"}],
    )
    assert field_truth(item, scene).right
    assert not field_truth(item, scene, "C").right
    assert item.answer == "B"  # judged at C without changing the item


def test_two_tallies_pool():
    a, b = FlagRates(), FlagRates()
    a.add("wrong", "count", True)
    a.add("right", "count", False)
    b.add("wrong", "count", None)
    b.add("wrong", "colour", False)
    both = a.merged(b)
    assert both.keys["wrong"] == 3 and both.flagged["wrong"] == 1 and both.abstained["wrong"] == 1
    assert both.by_kind["count"]["wrong"] == 2 and both.by_kind["colour"]["wrong"] == 1
    assert both.rate("wrong") == 1 / 3


def test_a_corpus_recompressed_keeps_its_truth_on_the_new_files(tmp_path):
    from PIL import Image

    from benchfoundry.devtools.flag_field import compress
    from benchfoundry.devtools.synthetic import load_truth

    (tmp_path / "images").mkdir()
    Image.new("RGB", (40, 30), (215, 38, 38)).save(tmp_path / "images" / "a.png")
    line = {"file": "images/a.png", "scene_id": "a", "objects": []}
    (tmp_path / "truth.jsonl").write_text(json.dumps(line) + "\n")
    compress(tmp_path, 30)
    assert load_truth(tmp_path) == [{**line, "file": "images/a.jpg"}]
    assert not (tmp_path / "images" / "a.png").exists()
    with Image.open(tmp_path / "images" / "a.jpg") as image:
        assert image.format == "JPEG" and image.size == (40, 30)


def test_the_wilson_interval_is_the_published_one():
    from benchfoundry.devtools.flag_check import wilson

    # 9 of 10 and 0 of 10: Wilson's score interval at 95% (as tables and statsmodels give it)
    low, high = wilson(9, 10)
    assert abs(low - 0.5958) < 1e-4 and abs(high - 0.9821) < 1e-4
    low, high = wilson(0, 10)
    assert low == 0.0 and abs(high - 0.2775) < 1e-4
    assert wilson(0, 0) == (0.0, 1.0)


def test_with_the_reader_off_the_models_vote_is_the_same_and_the_reader_only_adds():
    from benchfoundry.devtools.flag_check import ENSEMBLES, models_vote_kept
    from benchfoundry.tasks.qc.evidence import Evidence

    verdicts = [None, Evidence(True, "reads it"), Evidence(False, "reads another count")]
    # five ensemble outcomes; the models flag two of them (none right, and right on the first
    # pass only); the reader's doubt adds a flag on the other three, and changes no models' vote
    assert len(ENSEMBLES) == 5
    assert models_vote_kept(verdicts) == (15, 15, 3)


def test_every_way_of_spoiling_keeps_the_picture_where_it_was():
    import numpy as np
    from PIL import Image, ImageDraw

    from benchfoundry.devtools.flag_field import DEGRADATIONS

    image = Image.new("RGB", (120, 90), (250, 250, 250))
    ImageDraw.Draw(image).rectangle([30, 20, 59, 49], fill=(215, 38, 38))
    assert len(DEGRADATIONS) == 8
    for way, spoil in DEGRADATIONS.items():
        out = np.asarray(spoil(image, np.random.default_rng(0)), dtype=np.float64)
        assert out.shape == (90, 120, 3), way
        redness = np.clip(out[..., 0] - out[..., 1], 0, None)
        ys, xs = np.nonzero(redness > 0.5 * redness.max())
        # the square's centre stays at (44.5, 34.5) within a pixel and a half
        assert abs(xs.mean() - 44.5) < 1.5 and abs(ys.mean() - 34.5) < 1.5, way
        assert not np.array_equal(out, np.asarray(image)), way  # spoilt all the same


def test_an_abstention_counted_as_a_doubt_adds_to_the_flagged_keys_of_its_sort():
    flags = FlagRates()
    for sort, flagged in (("wrong", True), ("wrong", None), ("wrong", False), ("right", None)):
        flags.add(sort, "count", flagged)
    flags.add("right", "colour", False)
    assert doubted(flags, "wrong") == (2, 3)
    assert doubted(flags, "right") == (1, 2)
    assert flags.flagged["right"] == 0  # the flag itself is unchanged
