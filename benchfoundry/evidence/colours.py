"""Colour names of the evidence reader, by a method of its own: the nearest of the web's named
colours (CSS Color Module 4, `matplotlib.colors.CSS4_COLORS`, 148 names) in OKLab, each named
colour standing for a basic name (`BASIC_OF`) or for none (a hedge: teal, olive, maroon,
magenta, khaki...). A colour is named X where its nearest named colour stands for X (or is a hedge, but with a
colour standing for X within `HEDGE` times as far) and the nearest one standing for any other
basic name is at least `MARGIN` times as far; otherwise it is `None` (unclear). A colour of almost no chroma
is black, grey or white by its OKLab lightness (`NEUTRAL_BANDS`, with gaps where people
hesitate), since the named colours hold few dark greys., and no question is answered from it.

The key's describer names colours against the XKCD survey by CIEDE2000 bands
(`extractors/colour_names.py`); this module shares neither its calibration (another set of
named colours), its colour space (OKLab, Björn Ottosson 2020) nor its distance (Euclidean), and
imports nothing of it (an import-linter contract in pyproject.toml).

Every pixel is named through a table of 32 x 32 x 32 colours (each channel's top five bits),
built once per process: an image is named with one lookup."""

from __future__ import annotations

from functools import cache

import numpy as np
from matplotlib.colors import CSS4_COLORS, to_rgb
from scipy.spatial.distance import cdist

NAMES = ("red", "orange", "yellow", "green", "cyan", "blue", "purple", "pink", "brown",
         "black", "white", "grey")  # fmt: skip
UNCLEAR = -1  # a pixel whose colour has no clear name
MARGIN = 1.2  # the nearest colour of another basic name at least this many times farther
HEDGE = (
    1.15  # a hedge nearest names a colour unclear only where the basic names are this much farther
)
NEUTRAL_CHROMA = 0.035  # OKLab chroma: below it a colour is black, grey or white by lightness
# OKLab lightness bands of the neutral names; between them (dark grey? light grey?) unclear
NEUTRAL_BANDS = ((0.0, 0.30, "black"), (0.40, 0.85, "grey"), (0.93, 1.01, "white"))
# The named colours a person would call by one basic name; every other CSS name is a hedge.
BASIC_OF: dict[str, tuple[str, ...]] = {
    "red": ("red", "crimson", "firebrick", "darkred"),
    "orange": ("orange", "darkorange"),
    "yellow": ("yellow", "gold"),
    "green": ("green", "lime", "forestgreen", "darkgreen", "seagreen", "mediumseagreen",
              "limegreen", "lawngreen", "chartreuse", "lightgreen", "palegreen"),
    "cyan": ("cyan", "aqua", "darkturquoise"),
    "blue": ("blue", "mediumblue", "darkblue", "navy", "royalblue", "dodgerblue",
             "cornflowerblue", "steelblue", "skyblue", "lightskyblue", "lightblue",
             "midnightblue"),
    "purple": ("purple", "darkviolet", "darkorchid", "blueviolet", "indigo", "rebeccapurple",
               "mediumpurple", "darkmagenta", "mediumorchid"),
    "pink": ("pink", "hotpink", "deeppink", "lightpink"),
    "brown": ("brown", "saddlebrown", "sienna", "chocolate", "peru"),
    "black": ("black",),
    "white": ("white", "snow", "whitesmoke", "ghostwhite", "floralwhite"),
    "grey": ("dimgray", "gray", "darkgray", "silver"),
}  # fmt: skip


def oklab(rgb: np.ndarray) -> np.ndarray:
    """sRGB values in 0..1 (last axis the channels) in OKLab (L, a, b): the published matrices
    (Ottosson 2020); a dozen lines, so no colour library is needed for it."""
    rgb = np.asarray(rgb, dtype=np.float64)
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    lms = linear @ np.array(
        [
            [0.4122214708, 0.2119034982, 0.0883024619],
            [0.5363325363, 0.6806995451, 0.2817188376],
            [0.0514459929, 0.1073970566, 0.6299787005],
        ]
    )
    return np.cbrt(lms) @ np.array(
        [
            [0.2104542553, 1.9779984951, 0.0259040371],
            [0.7936177850, -2.4285922050, 0.7827717662],
            [-0.0040720403, 0.4505937099, -0.8086757660],
        ]
    )


@cache
def _palette() -> tuple[np.ndarray, np.ndarray]:
    """The named colours in OKLab and the index of the basic name each stands for (or -1)."""
    basic = {css: NAMES.index(name) for name, members in BASIC_OF.items() for css in members}
    names = sorted(CSS4_COLORS)
    # CSS spells grey both ways: one entry each, and the hedges keep their place
    names = [n for n in names if "grey" not in n]
    lab = oklab(np.array([to_rgb(CSS4_COLORS[n]) for n in names]))
    return lab, np.array([basic.get(n, UNCLEAR) for n in names])


def name_lab(lab: np.ndarray) -> np.ndarray:
    """The basic name's index of each OKLab colour (last axis L, a, b), or `UNCLEAR`."""
    palette, stands_for = _palette()
    flat = np.asarray(lab, dtype=np.float64).reshape(-1, 3)
    distance = cdist(flat, palette)
    nearest = np.argmin(distance, axis=-1)
    name = stands_for[nearest]
    best = distance[np.arange(len(flat)), nearest]
    # a hedge wins only where it is plainly nearer than every basic name's colour (coral beside
    # dark orange is still orange; teal itself is not blue or green)
    basic = np.where(stands_for == UNCLEAR, np.inf, distance)
    nearest_basic = np.argmin(basic, axis=-1)
    basic_best = basic[np.arange(len(flat)), nearest_basic]
    hedged = (name == UNCLEAR) & (basic_best <= HEDGE * best)
    name = np.where(hedged, stands_for[nearest_basic], name)
    best = np.where(hedged, basic_best, best)
    # the nearest colour that stands for another basic name (a hedge nearest is unclear itself)
    other = np.where((stands_for == name[:, None]) | (stands_for == UNCLEAR), np.inf, distance)
    clear = (name != UNCLEAR) & (other.min(axis=-1) >= MARGIN * best)
    named = np.where(clear, name, UNCLEAR)
    # the neutral axis: the named colours hold few dark greys, so its names go by lightness
    lightness, chroma = flat[:, 0], np.hypot(flat[:, 1], flat[:, 2])
    neutral = np.full(len(flat), UNCLEAR)
    for low, high, word in NEUTRAL_BANDS:
        neutral[(lightness >= low) & (lightness < high)] = NAMES.index(word)
    named = np.where(chroma < NEUTRAL_CHROMA, neutral, named)
    return named.reshape(np.shape(lab)[:-1])


@cache
def _table() -> np.ndarray:
    levels = (np.arange(32) * 8 + 4) / 255
    grid = np.stack(np.meshgrid(levels, levels, levels, indexing="ij"), axis=-1)
    return name_lab(oklab(grid.reshape(-1, 3))).reshape(32, 32, 32).astype(np.int8)


def colour_indexes(pixels: np.ndarray) -> np.ndarray:
    """Each pixel's basic name (an index into `NAMES`) or `UNCLEAR`, for an RGB array (0..255)."""
    q = np.asarray(pixels)[..., :3].astype(np.uint8) >> 3
    return _table()[q[..., 0], q[..., 1], q[..., 2]]


def colour_word(rgb: tuple[float, float, float]) -> str | None:
    """One colour's basic name (RGB 0..255), or None where it is unclear."""
    index = int(name_lab(oklab(np.array(rgb, dtype=np.float64) / 255)))
    return None if index == UNCLEAR else NAMES[index]
