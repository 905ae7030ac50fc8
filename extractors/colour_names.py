"""Colour names people agree on, measured in CIELAB against a crowd's naming of colours.

The XKCD colour survey (`matplotlib.colors.XKCD_COLORS`: 949 colours, each named by the crowd)
is the calibration. Its colours fall into three sorts by their names:
- **plain**: one basic colour name (`BASIC`), alone or with words that do not change the hue
  ("red", "bright red", "fire engine red", "reddish"; a grey in any lightness: "light grey");
- **hedged**: a name that says the colour is not plainly one basic colour: two basic names
  ("blue green", "greenish blue"), a lightness shade ("dark red", "deep blue", "pale green":
  maroon, navy and pastels are where people hesitate), or a hue word of its own (`HEDGES`: teal,
  navy, maroon, olive, beige, turquoise, magenta, lavender...);
- the rest (fanciful names with no hue word) take no part.

A colour is named X only where its nearest plain survey colour (CIEDE2000 distance) is an X, the
nearest plain colour of any other basic name is at least `MARGIN` farther, and the nearest hedged
survey colour at least `HEDGE_MARGIN` farther than that X (a colour about as near a shade people
qualify, "dark yellow", as to a plain yellow is one whose name a re-encoding can tip: it is
unclear in every copy of the picture, not named in one and not in another). A black, grey or white has almost no chroma (`NEUTRAL`) and is
named by its lightness (`GREY_SCALE`, with gaps where "dark grey" and "light grey" lie); a
colour with more chroma is never one of them.
Anything else is unclear, and its word is the two nearest basic names joined ("blue-green"),
which no template uses as a name: such an object gets no colour question and is not counted by
colour. `neighbours(X)` are the names a person could give an object beside X (the survey's
compound names join them, or they are next on the hue circle or the grey scale), never offered
beside X as a wrong option."""

from __future__ import annotations

import re
from functools import cache, lru_cache

import numpy as np
from skimage.color import deltaE_ciede2000, rgb2lab

BASIC = ("red", "orange", "yellow", "green", "cyan", "blue", "purple", "pink", "brown",
         "black", "white", "grey")  # fmt: skip
NEUTRALS = ("black", "white", "grey")
MARGIN = 4.0  # CIEDE2000: the second-best basic name at least this much farther than the best
HEDGE_MARGIN = 0.5  # CIEDE2000, half a step a person just sees: the nearest hedged colour's lead
NEUTRAL = 5.0  # CIELAB chroma: a black, white or grey has less; a colour with more is no grey
# CIELAB lightness bands of black, grey and white; between them people hesitate (dark grey or
# black? light grey or white?), and the survey's "dark grey" and "light grey" lie there
GREY_SCALE = ((0.0, 18.0, "black"), (27.0, 85.0, "grey"), (94.0, 100.1, "white"))
UNCLEAR_JOIN = "-"
# Forms of a basic name inside a survey name ("reddish", "gray")
FORMS = {"reddish": "red", "reddy": "red", "greenish": "green", "greeny": "green",
         "bluish": "blue", "blueish": "blue", "bluey": "blue", "yellowish": "yellow",
         "yellowy": "yellow", "purplish": "purple", "purpleish": "purple", "purpley": "purple",
         "purply": "purple", "pinkish": "pink", "pinky": "pink", "brownish": "brown",
         "browny": "brown", "greyish": "grey", "gray": "grey", "grayish": "grey",
         "orangish": "orange", "orangey": "orange", "blackish": "black", "whitish": "white",
         "bluegreen": "blue green", "greenblue": "green blue", "bluegrey": "blue grey"}  # fmt: skip
# Words that make a survey colour a shade people qualify rather than the basic colour itself
SHADES = {"dark", "deep", "darkish", "darker", "light", "lightish", "lighter", "pale",
          "pastel", "very", "dusky", "dusty", "faded", "washed"}  # fmt: skip
# Hue words of their own: a colour named with one is where people hesitate between basic names
HEDGES = {"teal", "navy", "maroon", "olive", "beige", "turquoise", "aqua", "lavender",
          "magenta", "khaki", "tan", "mauve", "lilac", "burgundy", "indigo", "violet", "cream",
          "taupe", "periwinkle", "fuchsia", "plum", "sand", "ecru"}  # fmt: skip
# Basic names next to each other on the hue circle or the grey scale
RING = ("red", "orange", "yellow", "green", "cyan", "blue", "purple", "pink")
GREYS = (("black", "grey"), ("grey", "white"))


def _words(name: str) -> list[str]:
    return [
        w for part in re.split(r"[ /-]", name) for w in FORMS.get(part.strip("'"), part).split()
    ]


def sort_of(name: str) -> str | None:
    """A survey name's sort: a basic name (plain), "~" (hedged), or None (no hue word)."""
    words = _words(name)
    hues = {w for w in words if w in BASIC}
    shade = bool(SHADES & set(words)) and not hues <= set(NEUTRALS)  # "light grey" is grey
    if len(hues) > 1 or any(w in HEDGES for w in words) or hues and shade:
        return "~"
    return hues.pop() if hues else None


@lru_cache(maxsize=1)
def _survey() -> tuple[np.ndarray, np.ndarray]:
    """The survey's plain and hedged colours: CIELAB values and sorts."""
    from matplotlib.colors import XKCD_COLORS, to_rgb

    named = [(sort_of(n.removeprefix("xkcd:")), to_rgb(v)) for n, v in XKCD_COLORS.items()]
    kept = [(s, rgb) for s, rgb in named if s]
    lab = rgb2lab(np.array([rgb for _, rgb in kept], np.float64)[None])[0]
    return lab, np.array([s for s, _ in kept])


def lab_of(rgb: tuple[float, float, float]) -> np.ndarray:
    return rgb2lab(np.asarray(rgb, np.float64).reshape(1, 1, 3) / 255)[0, 0]


def ranked(rgb: tuple[float, float, float]) -> list[tuple[float, str]]:
    """Each basic name's distance (the nearest plain survey colour of that name), nearest first,
    and the nearest hedged colour's as "~"."""
    lab, sorts = _survey()
    distance = deltaE_ciede2000(np.broadcast_to(lab_of(rgb), lab.shape), lab)
    best = {s: float(distance[sorts == s].min()) for s in (*BASIC, "~")}
    return sorted(((d, s) for s, d in best.items()), key=lambda pair: pair[0])


def colour_name(rgb: tuple[float, float, float]) -> str:
    """The basic colour name of an RGB value (0-255) where people agree on it; otherwise the two
    nearest basic names joined ("blue-green"), which is not `clear`."""
    return _named(tuple(round(float(v)) for v in rgb[:3]))  # type: ignore[arg-type]


@lru_cache(maxsize=8192)  # a drawing's few colours are named once
def _named(rgb: tuple[int, int, int]) -> str:
    lab = lab_of(rgb)
    if float(np.hypot(lab[1], lab[2])) < NEUTRAL:  # black, grey or white, by lightness
        band = next((name for low, high, name in GREY_SCALE if low <= lab[0] < high), None)
        if band:
            return band
        return "black-grey" if lab[0] < 50 else "grey-white"
    order = ranked(rgb)
    names = [s for _, s in order if s != "~"]
    distance = {s: d for d, s in order}
    first, second = names[0], names[1]
    clear = (
        first not in NEUTRALS
        and distance[second] - distance[first] >= MARGIN
        and distance["~"] - distance[first] >= HEDGE_MARGIN
    )
    return first if clear else f"{first}{UNCLEAR_JOIN}{second}"


def clear(word: str | None) -> bool:
    """Whether a describer's colour word is a basic name people agree on."""
    return word in BASIC


def candidates(word: str) -> set[str]:
    """The basic names an object of this colour word could be given: the name, or both names
    of an unclear word, with their neighbours."""
    names = {w for w in word.split(UNCLEAR_JOIN) if w in BASIC}
    return names | {n for w in names for n in neighbours(w)}


@cache
def neighbours(name: str) -> frozenset[str]:
    """Basic names a person could give an object beside `name`: those the survey joins with it
    in two or more compound names ("blue green", "greenish blue"), and those next to it on the
    hue circle or the grey scale."""
    from matplotlib.colors import XKCD_COLORS

    together: dict[str, int] = {}
    for survey_name in XKCD_COLORS:
        hues = {w for w in _words(survey_name.removeprefix("xkcd:")) if w in BASIC}
        if name in hues:
            for other in hues - {name}:
                together[other] = together.get(other, 0) + 1
    out = {other for other, n in together.items() if n >= 2}
    if name in RING:
        k = RING.index(name)
        out |= {RING[k - 1], RING[(k + 1) % len(RING)]}
    out |= {b if a == name else a for a, b in GREYS if name in (a, b)}
    return frozenset(out)
