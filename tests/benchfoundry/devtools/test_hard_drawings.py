"""The hard drawings' truth is what the pixels show, and the truth check judges keys on them as
a careful person would: two overlapping circles are two objects, a hexagon is no circle, a
photograph's or a texture's objects have no count."""

import io
import random

import numpy as np
import pytest
from PIL import Image

from benchfoundry.devtools.hard_drawings import FAMILIES, RGB, make_drawings
from benchfoundry.devtools.hard_packaged import packaged_pictures
from benchfoundry.devtools.hard_shapes import truth_mask
from benchfoundry.devtools.truth_check import check
from benchfoundry.devtools.truth_scene import position


def count(scene, letter, *numbers):
    return check("count", {}, [{"number": n} for n in numbers], letter, scene)


def _drawing(family: str, seed: int = 0):
    return FAMILIES[family](random.Random(f"{seed}:{family}"))


def test_every_family_draws_its_objects_where_the_truth_says():
    drawings = make_drawings(seed=3, per_family=1)
    assert {d.family for d in drawings} == set(FAMILIES)
    for d in drawings:
        assert d.image.size == (d.truth["width"], d.truth["height"])
        pixels = np.asarray(d.image).astype(int)
        for obj in d.truth["objects"]:
            x0, y0, x1, y1 = obj["box"]
            assert 0 <= x0 < x1 < d.truth["width"] and 0 <= y0 < y1 < d.truth["height"]
            if d.family in ("jpeg", "antialias", "outline", "ring") or "points" in obj:
                continue
            cx, cy = obj["center"]
            assert np.abs(pixels[cy, cx] - RGB[obj["colour"]]).max() <= 2, (d.family, obj)


def test_packaged_pictures_match_their_hand_written_truth():
    for name, data, truth in packaged_pictures():
        pixels = np.asarray(Image.open(io.BytesIO(data)).convert("L"))
        if name == "phantom.png":  # the dark ovals lie where the ellipses' parameters put them
            for obj in truth["objects"]:
                mask = truth_mask(obj, 400, 400)
                shade = np.median(pixels[mask])
                assert shade == 0 if obj["colour"] == "black" else shade > 40, obj["center"]
        if not name.startswith("chessboard"):
            continue
        assert len(truth["objects"]) == 64 and truth["countable"] is False
        for cell in truth["objects"]:
            cx, cy = cell["center"]
            assert pixels[cy, cx] == (255 if cell["colour"] == "white" else 0)


def test_two_overlapping_circles_of_one_colour_are_two_objects():
    scene = _drawing("overlap").truth
    circles = [o for o in scene["objects"] if o["shape"] == "circle"][:2]
    assert circles[0]["colour"] == circles[1]["colour"]
    n = len(scene["objects"])
    options = [str(n), str(n - 1), str(n + 1)]
    assert count(scene, "A", *options).right
    assert not count(scene, "B", *options).right  # the merged region's count


def test_identity_names_the_new_shapes_and_their_hints():
    scene = _drawing("hexagon").truth
    hexagon = scene["objects"][0]
    assert hexagon["shape"] == "hexagon"
    where = position(hexagon["box"], scene["width"], scene["height"])
    ask = {"colour": hexagon["colour"], "position": where}
    options = [{"noun": n} for n in ("hexagon", "circle", "star")]
    assert check("identity", ask, options, "A", scene).right
    assert not check("identity", ask, options, "B", scene).right
    # no shape hint fits a hexagon: a "round" object of its colour is not there
    round_one = {"colour": hexagon["colour"], "shape": "round"}
    places = [{"position": where}, {"position": "top left"}]
    assert check("position", round_one, places, "A", scene).expected is None
    oval = _drawing("oval").truth
    shape = oval["objects"][0]
    where = position(shape["box"], oval["width"], oval["height"])
    ask = {"colour": shape["colour"], "shape": "round"}
    places = [{"position": where}, {"position": "nowhere"}]
    assert check("position", ask, places, "A", oval).right  # an oval is round
    ask = {"colour": shape["colour"], "position": where}
    assert check("identity", ask, [{"noun": "oval"}, {"noun": "rectangle"}], "A", oval).right
    assert not check("identity", ask, [{"noun": "circle"}, {"noun": "rectangle"}], "A", oval).right


@pytest.mark.parametrize("name", ["astronaut.png", "chessboard_RGB.png"])
def test_photographs_and_textures_have_no_count(name):
    scene = next(truth for n, _, truth in packaged_pictures() if n == name)
    verdict = count(scene, "A", "64", "1", "0")
    assert not verdict.right and verdict.expected is None
    colour = {"shape": "rectangular", "position": "top left"}
    colours = [{"colour": "white"}, {"colour": "black"}]
    assert check("colour", colour, colours, "A", scene).expected is None


def test_a_logo_reads_as_its_word():
    scene = _drawing("logo", seed=1).truth
    word = scene["text_lines"][0]["text"]
    near = [{"text": word}, {"text": word.replace("o", "a", 1)}]
    assert check("read_text", {}, near, "A", scene).right
    cut = [{"text": word.replace("o", "", 1)}, {"text": word}]
    assert not check("read_text", {}, cut, "A", scene).right
