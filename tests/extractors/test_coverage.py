"""A flat region read between pixels (`extractors/coverage`): its area and box from how much of
each edge pixel it covers, and its shape from the outline where it covers half of each pixel.
Shapes are drawn four times their size with Pillow and reduced with Lanczos, as the invariance
bench's quarter copies are; the expected figures are the drawn shapes' own, divided by 16 (areas)
or by 4 (boxes)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PIL import Image, ImageDraw

from benchfoundry.extractors.coverage import coverage, covered, outline_spread
from benchfoundry.extractors.describe import describe
from benchfoundry.extractors.registry import create
from benchfoundry.extractors.shapes import between_pixels, not_a_triangle

PAPER, INK, OTHER = (240, 235, 230), (40, 90, 200), (230, 180, 20)


def _reduced(draw) -> np.ndarray:
    big = Image.new("RGB", (384, 288), PAPER)
    draw(ImageDraw.Draw(big))
    return np.asarray(big.resize((96, 72), Image.Resampling.LANCZOS))


def _mask(pixels: np.ndarray, near: tuple[int, int, int, int]) -> np.ndarray:
    """A segmenter's rough mask: the pixels of the box `near` nearer the ink than the paper."""
    x0, y0, x1, y1 = near
    out = np.zeros(pixels.shape[:2], bool)
    local = pixels[y0:y1, x0:x1].astype(float)
    out[y0:y1, x0:x1] = np.linalg.norm(local - INK, axis=-1) < np.linalg.norm(
        local - PAPER, axis=-1
    )
    return out


def _polygon(sides: int, radius: float, cx: float, cy: float, turn: float) -> list[tuple]:
    return [
        (cx + radius * math.cos(turn + 2 * math.pi * k / sides),
         cy + radius * math.sin(turn + 2 * math.pi * k / sides))
        for k in range(sides)
    ]  # fmt: skip


def test_a_7_px_triangle_beside_another_shape_keeps_its_drawn_area_and_box():
    drawn = [(161, 101), (189, 101), (175, 73)]  # 28 px wide, 28 tall, apex up
    pixels = _reduced(
        lambda d: (d.polygon(drawn, fill=INK), d.rectangle((150, 113, 210, 160), fill=OTHER))
    )  # a yellow box 12 px below it (3 px once reduced)
    big = Image.new("L", (384, 288), 0)
    ImageDraw.Draw(big).polygon(drawn, fill=1)
    area_drawn = np.asarray(big).sum() / 16  # 28 * 28 / 2 of the big drawing, about
    found = covered(coverage(pixels, _mask(pixels, (36, 14, 52, 30))))
    assert found is not None
    area, box = found
    assert area == pytest.approx(area_drawn, rel=0.04)
    # Pillow fills the polygon's last pixels: its box is (161, 73)-(190, 102). Its base is a
    # side, placed within a third of a pixel of a quarter of that; its other three extremes are
    # sharp corners, which the reduction's blur cuts (by under 0.8 px)
    assert box[3] == pytest.approx(102 / 4, abs=0.35)
    assert box == pytest.approx((161 / 4, 73 / 4, 190 / 4, 102 / 4), abs=0.8)


def test_a_square_box_is_placed_between_pixels():
    pixels = _reduced(lambda d: d.rectangle((101, 42, 149, 90), fill=INK))  # 49 x 49 px
    found = covered(coverage(pixels, _mask(pixels, (20, 6, 42, 28))))
    assert found is not None
    area, box = found
    assert area == pytest.approx(49 * 49 / 16, rel=0.02)
    # placed to a quarter of a pixel
    assert box == pytest.approx((101 / 4, 42 / 4, 150 / 4, 91 / 4), abs=0.25)


def test_no_reading_without_anything_clear_of_the_edge():
    pixels = np.full((6, 6, 3), INK, np.uint8)
    assert coverage(pixels, np.ones((6, 6), bool)) is None


@pytest.mark.parametrize("diameter", [10, 12, 16])
def test_a_small_disc_is_round_between_pixels_and_a_small_octagon_is_not(diameter):
    half = diameter * 2  # drawn four times larger
    for shift in (0.0, 1.3, 2.6):
        cx, cy = 150 + shift, 120 + shift / 2
        box = (cx - half, cy - half, cx + half, cy + half)
        near = (int(cx / 4) - diameter, int(cy / 4) - diameter,
                int(cx / 4) + diameter, int(cy / 4) + diameter)  # fmt: skip
        disc = _reduced(lambda d, box=box: d.ellipse(box, fill=INK))
        found = coverage(disc, _mask(disc, near))
        assert found is not None
        assert between_pixels(*outline_spread(found[0])) == "circle"
        octagon = _reduced(
            lambda d, cx=cx, cy=cy: d.polygon(_polygon(8, half, cx, cy, 0.2), fill=INK)
        )
        found = coverage(octagon, _mask(octagon, near))
        assert found is not None
        assert between_pixels(*outline_spread(found[0])) != "circle"


@pytest.mark.parametrize("half", [14, 18])  # 7 and 9 px once reduced
def test_a_disc_under_10_px_gets_no_name_it_could_be_an_octagon(half):
    disc = _reduced(lambda d: d.ellipse((150 - half, 120 - half, 150 + half, 120 + half), fill=INK))
    found = coverage(disc, _mask(disc, (26, 18, 50, 42)))
    assert found is not None
    assert between_pixels(*outline_spread(found[0])) is None


@pytest.mark.parametrize("across", [6, 7, 9])
def test_a_small_round_shape_is_no_triangle_and_a_small_triangle_is_one(across):
    # Below 10 px a disc may be an octagon (no name), but neither is a triangle; a triangle of
    # any turn or shape stays one
    half = across * 2  # drawn four times larger
    near = (int(150 / 4) - across, int(120 / 4) - across,
            int(150 / 4) + across, int(120 / 4) + across)  # fmt: skip

    def spread(draw) -> tuple[float, float, float]:
        pixels = _reduced(draw)
        found = coverage(pixels, _mask(pixels, near))
        assert found is not None
        return outline_spread(found[0])

    for shift in (0.0, 1.3, 2.6):
        cx, cy = 150 + shift, 120 + shift / 2
        box = (cx - half, cy - half, cx + half, cy + half)
        for sides, turn in ((8, 0.2), (6, 0.5), (6, 1.0)):
            polygon = _polygon(sides, half, cx, cy, turn)
            assert not_a_triangle(*spread(lambda d, p=polygon: d.polygon(p, fill=INK)))
        assert not_a_triangle(*spread(lambda d, box=box: d.ellipse(box, fill=INK)))
        for turn in (0.0, 0.4, 1.1, -math.pi / 2):
            triangle = _polygon(3, half, cx, cy, turn)
            assert not not_a_triangle(*spread(lambda d, p=triangle: d.polygon(p, fill=INK)))
        right = [(cx - half, cy - half), (cx + half, cy + half), (cx - half, cy + half)]
        assert not not_a_triangle(*spread(lambda d, p=right: d.polygon(p, fill=INK)))


def test_the_readings_give_a_quarter_size_drawing_its_drawn_areas():
    # a 49 px square, a 29 px square and a 29 px triangle (421 px drawn) at a quarter of their size:
    # both segmenters' masks of the 7 px triangle differed by half its area before
    big = Image.new("RGB", (384, 288), PAPER)
    draw = ImageDraw.Draw(big)
    draw.rectangle((40, 40, 88, 88), fill=INK)
    draw.rectangle((200, 60, 228, 88), fill=(200, 30, 30))
    draw.polygon([(136, 140), (165, 140), (150, 112)], fill=(20, 130, 40))
    small = big.resize((96, 72), Image.Resampling.LANCZOS)
    for role, backend in (("segmenter", "classical"), ("second_segmenter", "components")):
        areas = sorted(i.mask_area for i in describe(small, create(role, backend).segment(small)))
        assert areas == [
            pytest.approx(26, abs=2), pytest.approx(841 / 16, abs=2), pytest.approx(2401 / 16, abs=3)
        ]  # fmt: skip
