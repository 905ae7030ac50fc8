"""The truth check is strict: a key is right only when it alone among the options is true. It
reads a question's parts (kind, slots, each option's slots), never its text."""

from dataclasses import asdict

from benchfoundry.devtools.scene_shapes import SceneObject
from benchfoundry.devtools.synthetic import Scene
from benchfoundry.devtools.truth_check import check
from benchfoundry.devtools.truth_scene import position


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


def objects(*colours):
    return [{"object": c} for c in colours]


def test_interaction_keys_are_right_only_alone():
    red = {"object": "red"}
    options = objects("blue", "yellow", "purple")
    assert check("touch", red, options, "A", SCENE).right
    assert not check("touch", red, options, "B", SCENE).right
    # the green square overlaps the red one: it touches it too, so the key is not alone
    assert not check("touch", red, [*options, {"object": "green"}], "A", SCENE).right
    assert check("overlap", red, objects("yellow", "green"), "B", SCENE).right
    assert not check("overlap", red, objects("blue", "yellow"), "A", SCENE).right


def test_reasoning_and_scene_keys_follow_the_truth():
    more = [{"fixed": "more", "colour": "red"}, {"fixed": "more", "colour": "blue"}]
    compare = {"object": "red", "other": "blue"}
    options = [*more, {"fixed": "as_many"}]
    assert check("compare_counts", compare, options, "C", SCENE).right
    assert not check("compare_counts", compare, options, "A", SCENE).right
    numbers = [{"number": n} for n in ("4", "3", "2")]
    assert check("remove_and_count", {"colour": "red"}, numbers, "B", SCENE).right
    beside = {"side": "to the right of", "object": "yellow"}
    assert check("count_beside", beside, [{"number": n} for n in "234"], "B", SCENE).right
    across = {"side": "to the right of", "object": "red"}  # the green one straddles its edge
    assert (
        check("count_beside", across, [{"number": n} for n in "012"], "B", SCENE).expected is None
    )
    shapes = [{"noun": n} for n in ("square", "triangle", "star")]
    assert check("identity", {"position": "bottom left"}, shapes, "B", SCENE).right
    contents = [{"fixed": "several_objects_no_text"}, {"fixed": "text_no_objects"}]
    assert check("scene_content", {}, contents, "A", SCENE).right
    sides = [{"fixed": "left_only"}, {"fixed": "both_sides"}]
    assert check("layout", {"axis": "x"}, sides, "A", SCENE).right


def test_a_circle_is_an_oval_too_and_a_label_is_no_shape():
    scene = _scene(("circle", "red", (40, 40, 80, 80)), ("square", "blue", (300, 200, 340, 240)))
    where = {"position": "top left"}
    assert check("identity", where, [{"noun": "oval"}, {"noun": "square"}], "A", scene).right
    both = [{"noun": "circle"}, {"noun": "oval"}]  # two true options: no single key
    assert not check("identity", where, both, "A", scene).right
    # a recogniser's label, where the truth knows shapes only: no truth to judge it by
    labels = [{"name": "cup"}, {"name": "plate"}]
    verdict = check("identity", where, labels, "A", scene)
    assert not verdict.right and "true options: []" in verdict.why


def test_positions_are_the_cells_of_the_drawing_grid():
    assert position((0, 0, 40, 40), 384, 288) == "top left"
    assert position((172, 124, 212, 164), 384, 288) == "center"
    assert position((300, 120, 340, 160), 384, 288) == "middle right"
    assert position((172, 250, 212, 287), 384, 288) == "bottom center"
    assert position((124, 0, 132, 10), 384, 288) == "top center"  # centre on the line: right


def test_an_object_of_hesitant_colour_counts_only_for_the_names_it_could_be_given():
    scene = _scene(
        ("circle", "blue", (100, 100, 140, 140)),  # drawn navy: people say blue, purple or black
        ("square", "yellow", (200, 100, 240, 140)),
    )
    scene["objects"][0] |= {"colour": None, "could_be": ["blue", "purple", "black"]}
    numbers = [{"number": n} for n in "012"]
    # no one calls the navy circle yellow: one yellow object
    yellow = check("count", {"colour": "yellow"}, numbers, "B", scene)
    assert yellow.right and yellow.expected == "1"
    # whether it is blue people do not agree: the truth gives no answer
    blue = check("count", {"colour": "blue"}, numbers, "B", scene)
    assert not blue.right and blue.expected is None
    # without the names it could be given it could be any colour, yellow too
    del scene["objects"][0]["could_be"]
    assert check("count", {"colour": "yellow"}, numbers, "B", scene).expected is None
