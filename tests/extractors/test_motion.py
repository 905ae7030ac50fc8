"""The tracker behind motion facts follows one object across keyframes even where compression
moves its colour across the edge of its name ("yellow" in one frame, "yellow-green" in the next)."""

from benchfoundry.core.records import Instance
from benchfoundry.extractors.motion import motion_events


def _square(colour: str, y: float) -> Instance:
    return Instance(
        box=[100.0, y, 140.0, y + 40.0], mask_area=1600, label=None,
        attributes=[colour, "rectangular", "square", "flat-coloured", "medium", "top left"],
        dense_caption=None, score=1.0,
    )  # fmt: skip


def test_a_square_whose_colour_name_wavers_is_one_track_that_moves_down():
    frames = [
        (0.5, [_square("yellow", 20.0), _square("blue", 200.0)]),
        (1.0, [_square("yellow-green", 100.0), _square("blue", 200.0)]),
        (1.5, [_square("yellow", 180.0), _square("blue", 200.0)]),
    ]
    moved = [e for e in motion_events(frames, 320.0, 240.0) if e.event == "moved"]
    assert [(e.object, e.detail) for e in moved] == [
        ("yellow rectangle", "down, from the top centre to the bottom centre")
    ]
    # a colour that only shares nothing with it is another object
    apart = [(0.5, [_square("yellow", 20.0)]), (1.0, [_square("blue-purple", 100.0)])]
    assert [e for e in motion_events(apart, 320.0, 240.0) if e.event == "moved"] == []
