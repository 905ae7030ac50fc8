"""Shape names from outlines, the second segmentation, and where the two readings agree: on
drawings made here with PIL (hard-edged, anti-aliased, JPEG) and on a picture that ships with
scikit-image."""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pytest
import skimage
from PIL import Image, ImageDraw

from benchfoundry.extractors.agreement import agreement, shape_of
from benchfoundry.extractors.shapes import shape_name, small_shape
from benchfoundry.tasks.extract.options import ExtractOptions
from benchfoundry.tasks.extract.stage import BatchOutcome, Pending, build_extractors, extract_images

SIDE = 256


def _polygon(n: int, r: float, rotation: float, inner: float | None = None) -> list[tuple]:
    corners = 2 * n if inner else n
    return [
        (
            SIDE / 2 + (r if not inner or i % 2 == 0 else inner * r) * math.cos(a),
            SIDE / 2 + (r if not inner or i % 2 == 0 else inner * r) * math.sin(a),
        )
        for i in range(corners)
        if (a := rotation + 2 * math.pi * i / corners) is not None
    ]


def _shape(kind: str, r: float, draw: ImageDraw.ImageDraw, fill: object, scale: int = 1) -> None:
    c, size = SIDE * scale / 2, r
    r = r * scale
    box = (c - r, c - r, c + r, c + r)
    if kind == "circle":
        draw.ellipse(box, fill=fill)
    elif kind == "oval":
        draw.ellipse((c - r, c - 0.6 * r, c + r, c + 0.6 * r), fill=fill)
    elif kind == "square":
        draw.rectangle(box, fill=fill)
    elif kind == "rectangle":
        draw.rectangle((c - r, c - 0.5 * r, c + r, c + 0.5 * r), fill=fill)
    elif kind == "ring":
        draw.ellipse(box, fill=fill)
        draw.ellipse((c - 0.55 * r, c - 0.55 * r, c + 0.55 * r, c + 0.55 * r), fill=0)
    elif kind == "cross":
        w = 0.33 * r
        draw.rectangle((c - r, c - w, c + r, c + w), fill=fill)
        draw.rectangle((c - w, c - r, c + w, c + r), fill=fill)
    else:
        n, rotation, inner = {
            "diamond": (4, 0.0, None),
            "triangle": (3, -math.pi / 2, None),
            "pentagon": (5, -math.pi / 2, None),
            "hexagon": (6, 0.0, None),
            "octagon": (8, math.pi / 8, None),
            "star": (5, -math.pi / 2, 0.45),
        }[kind]
        points = [(x * scale, y * scale) for x, y in _polygon(n, size, rotation, inner)]
        draw.polygon(points, fill=fill)


def _mask(kind: str, r: float, smooth: bool, jpeg: bool) -> np.ndarray:
    scale = 4 if smooth else 1
    image = Image.new("L", (SIDE * scale, SIDE * scale), 0)
    _shape(kind, r, ImageDraw.Draw(image), 255, scale)
    if smooth:
        image = image.resize((SIDE, SIDE), Image.Resampling.LANCZOS)
    if jpeg:
        data = io.BytesIO()
        image.save(data, "JPEG", quality=60)
        image = Image.open(data)
    return np.asarray(image) > 127


KINDS = ("circle", "oval", "square", "rectangle", "diamond", "triangle", "pentagon", "hexagon",
         "octagon", "star", "cross", "ring")  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
def test_a_shape_is_named_what_it_is_or_not_at_all(kind):
    named = 0
    for r in (14, 30, 80):
        for smooth, jpeg in ((False, False), (True, False), (True, True)):
            got = shape_name(_mask(kind, r, smooth, jpeg))
            assert got in (kind, None), f"{kind} r={r} smooth={smooth} jpeg={jpeg}: {got}"
            named += got == kind
    assert named >= 6  # large ones always: r=30 and r=80 in all three renderings


def test_shapes_run_together_and_small_specks_have_no_name():
    image = Image.new("L", (SIDE, SIDE), 0)
    draw = ImageDraw.Draw(image)
    draw.ellipse((60, 80, 150, 170), fill=255)
    draw.ellipse((110, 80, 200, 170), fill=255)
    assert shape_name(np.asarray(image) > 0) is None
    dot = np.zeros((40, 40), bool)
    dot[15:25, 15:25] = True
    assert shape_name(dot) is None


@pytest.fixture(scope="module")
def facts_of():
    extractors = build_extractors(ExtractOptions(captioner="none"))

    def read(image: Image.Image):
        outcome = BatchOutcome()
        extract_images([Pending("f" * 64, "drawn", image.convert("RGB"))], extractors, outcome)
        return outcome.records[0]

    return read


def _canvas() -> tuple[Image.Image, ImageDraw.ImageDraw]:
    image = Image.new("RGB", (SIDE, SIDE), "white")
    return image, ImageDraw.Draw(image)


def test_the_readings_agree_on_plain_shapes_and_name_a_hexagon(facts_of):
    image, draw = _canvas()
    hexagon = [(180 + 40 * math.cos(a * math.pi / 3), 128 + 40 * math.sin(a * math.pi / 3))
               for a in range(6)]  # fmt: skip
    draw.polygon(hexagon, fill=(255, 140, 0))
    draw.rectangle((30, 100, 80, 150), fill=(0, 0, 200))
    found = agreement(facts_of(image))
    assert (found.objects_why_not, found.counts_why_not) == (None, None)
    assert sorted(shape_of(o) for o in found.objects) == ["hexagon", "square"]


def test_a_dot_under_the_size_threshold_makes_the_readings_disagree(facts_of):
    image, draw = _canvas()
    draw.ellipse((70, 70, 190, 190), fill=(130, 0, 160))
    # about 7 px across: under the default segmenter's 0.06% of the image (an 8 x 8 square of
    # the 384 px copy), over the second reading's 0.03%
    draw.ellipse((210, 120, 216, 126), fill=(240, 220, 0))
    facts = facts_of(image)
    assert len(facts.instances) == 1 and len(facts.second_instances) == 2
    assert agreement(facts).objects_why_not == "extractors_disagree"


def test_two_same_colour_circles_run_together_are_not_counted(facts_of):
    image, draw = _canvas()
    draw.ellipse((60, 80, 150, 170), fill=(220, 30, 30))
    draw.ellipse((110, 80, 200, 170), fill=(220, 30, 30))
    assert agreement(facts_of(image)).counts_why_not == "unclear_shapes"


def test_a_packaged_checkerboard_is_not_counted(facts_of):
    board = Image.open(Path(skimage.__file__).parent / "data" / "chessboard_RGB.png")
    assert agreement(facts_of(board)).objects_why_not == "extractors_disagree"


def test_a_word_cut_at_a_graphic_is_a_fragment_and_a_whole_word_agrees(facts_of):
    from matplotlib import font_manager

    font = font_manager.findfont("DejaVu Sans")
    from PIL import ImageFont

    large = ImageFont.truetype(font, 40)
    image, draw = _canvas()
    draw.text((20, 40), "matpl", fill="black", font=large)
    draw.ellipse((128, 42, 166, 86), fill=(240, 160, 0))  # a graphic where a letter would be
    draw.text((168, 40), "tlib", fill="black", font=large)
    draw.text((20, 160), "Harbour", fill="black", font=large)
    found = agreement(facts_of(image))
    assert [line.text for line in found.lines] == ["Harbour"]


def test_a_large_photographs_region_is_named_from_a_reduced_copy():
    """A region thousands of pixels across is named from every k-th pixel of its surroundings
    (`describe.NAMING_SIDE`), and still named right."""
    from benchfoundry.extractors.base import Region
    from benchfoundry.extractors.describe import describe

    image = Image.new("RGB", (3000, 2000), "white")
    ImageDraw.Draw(image).ellipse((400, 300, 1900, 1800), fill=(200, 30, 30))
    mask = np.all(np.asarray(image) == (200, 30, 30), axis=-1)
    (instance,) = describe(image, [Region((400, 300, 1900, 1800), int(mask.sum()), 0.8, mask)])
    assert instance.attributes[:3] == ["red", "round", "circle"]


def _pixels(picture: str) -> np.ndarray:
    return np.array([[c == "#" for c in row] for row in picture.split()], bool)


@pytest.mark.parametrize(
    ("picture", "named"),
    [
        # as the two readings cut 7 px shapes of a 96 px icon (the invariance bench's drawings)
        ("####### ####### ####### ####### ####### ####### #######", "square"),
        ("#....#. ####### ####### ####### ####### ####### #######", "square"),  # two strays
        ("########## ########## ########## ##########", "rectangle"),
        ("...#... ...#... ..###.. ..###.. .#####. .#####. #######", "triangle"),
        # a blurred tip and base, the base's rim taken in
        ("...##... ..####.. .#####.. .######. #######. ######## ######## ######## .#####..",
         "triangle"),
        ("...#... ...#... ..###.. ..###.. .#####. .#####. #######"[::-1], "triangle"),  # tip down
        # discs: the box of their fuller rows leaves many pixels out; they narrow again
        ("..###.. .#####. ####### ####### ####### .#####. ..###..", None),
        (".#####. ######. ####### ####### ######. .#####. ...#...", None),  # a nub below
        # a diamond widens and narrows; a house stops widening half way
        ("...#... ..###.. .#####. ####### .#####. ..###.. ...#...", None),
        ("...#... ..###.. .#####. ####### ####### ####### #######", None),
        ("### ### ###", None),  # under 4 px: a dot
    ],
)  # fmt: skip
def test_a_shape_too_small_to_trace_is_named_only_where_its_pixels_say_so(picture, named):
    assert small_shape(_pixels(picture)) == named
