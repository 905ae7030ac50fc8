"""The truth check is strict: a key is right only when it alone among the options is true."""

from dataclasses import asdict

from benchfoundry.devtools.scene_shapes import SceneObject
from benchfoundry.devtools.synthetic import Scene
from benchfoundry.devtools.truth_check import check


def _scene(*objects):
    made = [
        SceneObject(shape, colour, "medium", ((x0 + x1) // 2, (y0 + y1) // 2), (x0, y0, x1, y1))
        for shape, colour, (x0, y0, x1, y1) in objects
    ]
    return asdict(Scene("t", "contact", 384, 288, (240, 240, 240), objects=made))


SCENE = _scene(
    ("square", "red", (100, 100, 160, 160)),
    ("circle", "blue", (161, 115, 191, 145)),  # touches red
    ("square", "green", (140, 60, 180, 110)),  # overlaps red
    ("triangle", "yellow", (20, 200, 60, 240)),
)


def test_interaction_keys_are_right_only_alone():
    ask = "Which object touches the red object?"
    options = ["the blue object", "the yellow object", "the purple object"]
    assert check(ask, options, "A", SCENE).right
    assert not check(ask, options, "B", SCENE).right
    # the green square overlaps the red one: it touches it too, so the key is not alone
    assert not check(ask, [*options, "the green object"], "A", SCENE).right
    overlap = "Which object overlaps the red object?"
    assert check(overlap, ["the yellow object", "the green object"], "B", SCENE).right
    assert not check(overlap, ["the blue object", "the yellow object"], "A", SCENE).right


def test_reasoning_and_scene_keys_follow_the_truth():
    options = ["more red objects", "more blue objects", "as many of each"]
    ask = "Are there more red objects, more blue objects, or as many of each in the image?"
    assert check(ask, options, "C", SCENE).right and not check(ask, options, "A", SCENE).right
    remove = "If the red objects were removed, how many objects would remain?"
    assert check(remove, ["4", "3", "2"], "B", SCENE).right
    beside = "How many objects are to the right of the yellow object?"
    assert check(beside, ["2", "3", "4"], "B", SCENE).right
    across = "How many objects are to the right of the red object?"  # the green one straddles
    assert check(across, ["0", "1", "2"], "B", SCENE).expected is None
    identity = "What is the object at the bottom left of the image?"
    assert check(identity, ["a square", "a triangle", "a star"], "B", SCENE).right
    content = "What does the image contain?"
    assert check(content, ["several objects and no text", "text but no objects"], "A", SCENE).right
    side = "Which side of the image are the objects on, left or right?"
    assert check(side, ["only the left side", "both sides"], "A", SCENE).right
