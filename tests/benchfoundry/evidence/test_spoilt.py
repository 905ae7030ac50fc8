"""The evidence reader on pictures spoilt in ways that move nothing in them: a blur, sensor
noise, a warm lamp's light. It reads the things as drawn: no blended ring around a shape
counted as a thing of its own, shapes named though their corners are rounded, colours named
as a person names them under the lamp."""

import io

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFilter

from benchfoundry.evidence.colours import colour_word
from benchfoundry.evidence.reading import read_pixels

DRAWN = {("red", "circle"), ("blue", "square"), ("green", "triangle")}


@pytest.fixture(scope="module")
def drawing():
    image = Image.new("RGB", (384, 288), (250, 250, 250))
    draw = ImageDraw.Draw(image)
    draw.ellipse([40, 40, 110, 110], fill=(215, 38, 38))
    draw.rectangle([200, 50, 260, 110], fill=(35, 75, 215))
    draw.polygon([(150, 170), (190, 240), (110, 240)], fill=(34, 150, 60))
    return image


def _read(image):
    return {(t.colour, t.noun) for t in read_pixels(image, text=False).things}


def test_a_blurred_drawing_is_read_as_drawn(drawing):
    assert _read(drawing) == DRAWN
    assert _read(drawing.filter(ImageFilter.GaussianBlur(2.3))) == DRAWN  # was a ring each


def test_a_noisy_drawing_is_read_as_drawn(drawing):
    pixels = np.asarray(drawing, dtype=np.float64)
    noisy = pixels + np.random.default_rng(0).normal(0, 8, pixels.shape)
    assert _read(Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8))) == DRAWN


def test_under_a_warm_lamp_colours_are_named_as_drawn(drawing):
    rgb = np.asarray(drawing, dtype=np.float64) / 255
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    warm = linear * (1.0, 0.85, 0.6)
    out = np.where(warm <= 0.0031308, 12.92 * warm, 1.055 * warm ** (1 / 2.4) - 0.055)
    assert _read(Image.fromarray((255 * out).round().astype(np.uint8))) == DRAWN


def test_a_hedge_names_a_colour_unclear_only_where_it_is_plainly_nearer():
    assert colour_word((255, 127, 80)) is None  # coral itself: orange or pink?
    assert colour_word((245, 128, 40)) == "orange"  # between dark orange and coral


def _star(cx, cy, r):
    angles = [np.radians(-90 + 36 * i) for i in range(10)]
    return [
        (cx + (r if i % 2 == 0 else 0.45 * r) * np.cos(a),
         cy + (r if i % 2 == 0 else 0.45 * r) * np.sin(a))
        for i, a in enumerate(angles)
    ]  # fmt: skip


def _jpeg(image, quality):
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality)
    return Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")


def test_a_cream_star_on_white_paper_is_a_thing_through_noise_and_jpeg(drawing):
    # cream (245, 245, 220) is 0.039 from the paper in OKLab: inside the old backdrop's 0.06
    pale = drawing.copy()
    ImageDraw.Draw(pale).polygon(_star(310, 210, 40), fill=(245, 245, 220))
    pixels = np.asarray(pale, dtype=np.float64)
    noisy = pixels + np.random.default_rng(1).normal(0, 8, pixels.shape)
    noisy = Image.fromarray(np.clip(noisy, 0, 255).round().astype(np.uint8))
    for spoilt in (pale, noisy, _jpeg(pale, 15), pale.filter(ImageFilter.GaussianBlur(1.7))):
        things = read_pixels(spoilt, text=False).things
        assert [t.colour for t in things[:3]] == ["red", "blue", "green"]  # largest first
        assert len(things) == 4
        assert things[3].position == "bottom right"  # the star (the old reader: 3 things)


def test_jpeg_ringing_along_a_shape_is_not_a_faint_thing(drawing):
    for quality in (10, 15, 25):  # (the triangle's corners may go: its name is not asked here)
        things = read_pixels(_jpeg(drawing, quality), text=False).things
        assert [t.colour for t in things] == ["red", "blue", "green"]
