"""The evidence reader's own reading of an image: quality control's check of a template key,
made from the pixels by a method neither of the readings that wrote the key uses.

The segmenter groups pixels by a graph of colour differences, the second reading by an adaptive
palette (median cut) and 8-connected pieces; this one names every pixel's colour by fixed
hue and lightness bands of its own (not the describer's CIELAB naming), opens each colour's
pixels with a 3 x 3 square (a blended edge or a hair-line one or two pixels wide goes), and
takes the 4-connected pieces. Where the frame is one colour, the pixels near that colour are
the backdrop (a pale green backdrop is not a green object's colour, though both are named
green). Each piece is a thing
with a colour, a shape name from its outline (`shapes.shape_name`), a place and an area."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image
from scipy import ndimage

from benchfoundry.extractors.base import ANALYSIS_SIDE, analysis_copy
from benchfoundry.extractors.describe import colour_name, position_phrase
from benchfoundry.extractors.shapes import shape_name

NAMES = ("black", "white", "grey", "brown", "olive", "beige", "red", "orange", "yellow",
         "green", "cyan", "blue", "purple", "pink")  # fmt: skip
_SQUARE = np.ones((3, 3), bool)
_BACKDROP = 40.0  # pixels this close (RGB distance) to a plain frame's colour are the backdrop


@dataclass(frozen=True)
class Thing:
    colour: str
    noun: str | None  # its shape's name, or None
    box: tuple[float, float, float, float]
    area: int
    position: str


@dataclass(frozen=True)
class Reading:
    things: list[Thing]
    size: tuple[int, int]
    background: str | None  # the frame's colour, None where the frame has no one colour
    text_lines: int = 0  # the lines of text OCR read there, whose letters are left out

    def without(self, boxes: list[list[float]]) -> Reading:
        """The reading less the things lying mostly inside one of `boxes` (the letters of a
        line of text, which are not objects)."""

        def inside(thing: Thing, box: list[float]) -> bool:
            x0, y0, x1, y1 = thing.box
            w = max(0.0, min(x1, box[2]) - max(x0, box[0]))
            h = max(0.0, min(y1, box[3]) - max(y0, box[1]))
            return w * h >= 0.5 * max(1.0, (x1 - x0) * (y1 - y0))

        kept = [t for t in self.things if not any(inside(t, box) for box in boxes)]
        return Reading(kept, self.size, self.background, len(boxes))


def colour_names(pixels: np.ndarray) -> np.ndarray:
    """Each pixel's colour name (an index into `NAMES`), by hue, saturation and lightness
    bands, computed for the whole array at once."""
    rgb = pixels[..., :3].astype(np.float32) / 255
    high, low = rgb.max(axis=-1), rgb.min(axis=-1)
    lightness = (high + low) / 2
    spread = high - low
    # grey, black and white have no saturation: divided only where there is a spread (black's
    # 0 / 0 warned on the demo's output)
    scale = np.where(lightness <= 0.5, high + low, 2 - high - low + 1e-9)
    saturation = np.divide(spread, scale, out=np.zeros_like(spread), where=spread > 0)
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    safe = np.where(spread == 0, 1, spread)
    hue = np.select(
        [high == r, high == g],
        [((g - b) / safe) % 6, (b - r) / safe + 2],
        (r - g) / safe + 4,
    )
    degrees = np.where(spread == 0, 0, hue * 60)
    index = {name: i for i, name in enumerate(NAMES)}
    bands = np.array([15, 40, 70, 165, 195, 255, 315, 345, 360])
    band_names = ["red", "orange", "yellow", "green", "cyan", "blue", "purple", "pink", "red"]
    out = np.array([index[n] for n in band_names])[np.searchsorted(bands, degrees, side="right")]
    out = np.where((out == index["red"]) & (lightness > 0.7), index["pink"], out)
    beige = (degrees >= 10) & (degrees < 45) & (saturation < 0.5) & (lightness > 0.55)
    out = np.where(beige, index["beige"], out)
    dark_warm = (lightness < 0.35) & (degrees >= 15) & (degrees < 70)
    out = np.where(dark_warm, np.where(degrees < 45, index["brown"], index["olive"]), out)
    grey = (saturation < 0.2) | (spread < 0.12)
    greys = np.where(
        lightness > 0.85, index["white"], np.where(lightness > 0.25, index["grey"], index["black"])
    )
    out = np.where(grey, greys, out)
    return np.where(high < 0.2, index["black"], out)


def read_pixels(image: Image.Image, side: int = ANALYSIS_SIDE, min_area: int = 30) -> Reading:
    """The things in `image`, largest first (see the module's docstring), read from a copy with
    its longer side `side` long; a thing has `min_area` pixels of that copy or more (a share of
    the image: a photograph enlarged six times holds the same things)."""
    rgb, factor = analysis_copy(image, side)
    pixels = np.asarray(rgb).astype(np.float32)
    names = colour_names(pixels)
    frame = np.concatenate([pixels[0], pixels[-1], pixels[:, 0], pixels[:, -1]])
    median = np.median(frame, axis=0)
    plain = np.mean(np.linalg.norm(frame - median, axis=1) < _BACKDROP) >= 0.6
    backdrop = (
        np.linalg.norm(pixels - median, axis=-1) < _BACKDROP
        if plain
        else np.zeros(names.shape, bool)
    )
    things = []
    for colour in np.unique(names[~backdrop]):
        opened = ndimage.binary_opening((names == colour) & ~backdrop, structure=_SQUARE)
        labels, _ = ndimage.label(opened)
        for piece, box in enumerate(ndimage.find_objects(labels), start=1):
            if box is None:
                continue
            mask = labels[box] == piece
            if mask.sum() < min_area:
                continue
            area = int(mask.sum() / factor**2)
            ys, xs = box
            full = np.zeros(names.shape, bool)
            full[box] = mask
            scaled = tuple(float(v / factor) for v in (xs.start, ys.start, xs.stop, ys.stop))
            things.append(
                Thing(
                    colour=NAMES[colour],
                    noun=shape_name(full),
                    box=scaled,  # type: ignore[arg-type]
                    area=area,
                    position=position_phrase(scaled, image.width, image.height),  # type: ignore[arg-type]
                )
            )
    things.sort(key=lambda t: -t.area)
    return Reading(things, image.size, colour_name(tuple(median)) if plain else None)
