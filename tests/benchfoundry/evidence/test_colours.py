"""The evidence reader's colour names (nearest CSS named colour in OKLab): the bench's drawing
colours named as drawn, greys by lightness with gaps, hedged colours unclear, and no numpy
warning on the way (the demo's output once held a 0 / 0 warning, from black pixels)."""

import warnings

import numpy as np

from benchfoundry.evidence.colours import NAMES, UNCLEAR, colour_indexes, colour_word


def test_drawing_colours_are_named_as_drawn():
    drawn = {
        (215, 38, 38): "red",
        (34, 150, 60): "green",
        (35, 75, 215): "blue",
        (235, 195, 20): "yellow",
        (240, 125, 15): "orange",
        (135, 55, 175): "purple",
        (20, 20, 20): "black",
        (255, 0, 0): "red",
        (0, 0, 255): "blue",
        (255, 255, 255): "white",
        (128, 128, 128): "grey",
        (255, 192, 203): "pink",
        (139, 69, 19): "brown",
        (0, 255, 255): "cyan",
    }
    assert {rgb: colour_word(rgb) for rgb in drawn} == drawn


def test_hedged_and_in_between_colours_are_unclear():
    # teal, olive, maroon, magenta: colours people name with a word of their own
    for rgb in [(0, 128, 128), (128, 128, 0), (128, 0, 0), (255, 0, 255)]:
        assert colour_word(rgb) is None, rgb
    # between black and grey, between grey and white: people hesitate
    assert colour_word((60, 60, 60)) is None
    assert colour_word((215, 215, 215)) is None


def test_a_whole_image_is_named_at_once_without_warnings():
    levels = np.arange(0, 256, 17, dtype=np.uint8)
    grid = np.stack(np.meshgrid(levels, levels, levels, indexing="ij"), axis=-1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        named = colour_indexes(grid)
    assert named.shape == grid.shape[:3]
    assert {NAMES[n] for n in np.unique(named) if n != UNCLEAR} == set(NAMES)
    assert 0.2 < np.mean(named == UNCLEAR) < 0.8  # it abstains, and not on everything
