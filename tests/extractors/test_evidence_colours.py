"""The evidence reader's colour names, computed for a whole image at once: black, white and the
greys the describer names (outside its unclear bands between them) named alike, and no warning on the way (the demo's output once held
numpy's 0 / 0 warning, from black pixels)."""

import warnings

import numpy as np

from benchfoundry.extractors.colour_names import clear
from benchfoundry.extractors.describe import colour_name
from benchfoundry.extractors.evidence import NAMES, colour_names


def test_colour_names_warn_of_nothing_and_name_greys_as_the_describer():
    levels = np.arange(0, 256, 17, dtype=np.uint8)  # 0 .. 255 in 16 steps, every mix of them
    grid = np.stack(np.meshgrid(levels, levels, levels, indexing="ij"), axis=-1).reshape(-1, 1, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        names = colour_names(grid)[:, 0]
    assert {NAMES[n] for n in names} >= {"black", "white", "grey", "red", "green", "blue"}
    greys = np.stack([np.arange(256, dtype=np.uint8)] * 3, axis=-1)[:, None, :]
    named = 0
    for (pixel,), name in zip(greys, colour_names(greys)[:, 0], strict=True):
        described = colour_name(tuple(int(c) for c in pixel))
        if clear(described):
            named += 1
            assert NAMES[name] == described, pixel
    assert named >= 180  # most of the grey scale is named plainly
