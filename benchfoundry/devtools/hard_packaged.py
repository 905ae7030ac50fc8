"""Pictures from installed packages, with truth written by hand after looking at them: the
chessboards of scikit-image (8 x 8 squares of 25 px, the top left one white, read from the
pixels), the Shepp-Logan phantom (its ellipses, from the phantom's published parameters and
checked against the pixels), matplotlib's logo (the word "matplotlib" whose "o" is a polar
chart), and photographs, whose objects nobody can count or name from a template's words."""

from __future__ import annotations

import math
from importlib.resources import files

from benchfoundry.devtools.hard_shapes import board_cells, scene_truth, size_word

# (x half axis, y half axis, x centre, y centre, degrees) in the phantom's [-1, 1] frame, y up:
# the ellipses a person sees (the skull's inner ellipse is the head's inside, not a thing).
PHANTOM = {
    "head": ("oval", "grey", (0.69, 0.92, 0.0, 0.0, 0)),
    "right": ("oval", "black", (0.11, 0.31, 0.22, 0.0, -18)),
    "left": ("oval", "black", (0.16, 0.41, -0.22, 0.0, 18)),
    "top": ("oval", "grey", (0.21, 0.25, 0.0, 0.35, 0)),
    "upper dot": ("circle", "grey", (0.046, 0.046, 0.0, 0.1, 0)),
    "lower dot": ("circle", "grey", (0.046, 0.046, 0.0, -0.1, 0)),
    "bottom left": ("oval", "grey", (0.046, 0.023, -0.08, -0.605, 0)),
    "bottom middle": ("circle", "grey", (0.023, 0.023, 0.0, -0.606, 0)),
    "bottom right": ("oval", "grey", (0.023, 0.046, 0.06, -0.605, 0)),
}
PHOTOS = ("astronaut.png", "coffee.png", "chelsea.png", "camera.png")


def _ellipse(shape: str, colour: str, params: tuple, side: int) -> dict:
    a, b, x0, y0, degrees = params
    phi = math.radians(degrees)
    points = []
    for k in range(72):
        t = 2 * math.pi * k / 72
        x = x0 + a * math.cos(t) * math.cos(phi) - b * math.sin(t) * math.sin(phi)
        y = y0 + a * math.cos(t) * math.sin(phi) + b * math.sin(t) * math.cos(phi)
        points.append([round((x + 1) / 2 * side - 0.5, 2), round((1 - y) / 2 * side - 0.5, 2)])
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    box = [math.floor(min(xs)), math.floor(min(ys)), math.ceil(max(xs)), math.ceil(max(ys))]
    area = math.pi * a * b * side * side / 4
    return {
        "shape": shape, "colour": colour, "style": "filled", "line": 0, "points": points,
        "box": box, "center": [round((x0 + 1) / 2 * side), round((1 - y0) / 2 * side)],
        "size": size_word(area, side, side),
    }  # fmt: skip


def _truth(family: str, width: int, height: int, objects: list[dict], **more) -> dict:
    lines = more.pop("text_lines", [])
    return scene_truth(family, width, height, objects, lines, **more)


def packaged_pictures() -> list[tuple[str, bytes, dict]]:
    """(file name, bytes as packaged, truth) for each packaged picture."""
    skimage = files("skimage") / "data"
    sample = files("matplotlib") / "mpl-data" / "sample_data"
    board = board_cells(0, 0, 25, 8, 8, "white", "black")
    out = [
        # 64 squares on the whole image: a texture, not a count of objects
        ("chessboard_RGB.png", skimage, _truth("packaged", 200, 200, board, countable=False)),
        ("chessboard_GRAY.png", skimage, _truth("packaged", 200, 200, board, countable=False)),
        # the head holds the other ellipses, some faint: how many objects has no one answer
        (
            "phantom.png",
            skimage,
            _truth(
                "packaged",
                400,
                400,
                [_ellipse(*spec, 400) for spec in PHANTOM.values()],
                countable=False,
            ),
        ),
        # the word on a transparent ground; its "o" a polar chart of many colours in a ring
        (
            "logo2.png",
            sample,
            _truth(
                "packaged",
                542,
                130,
                [
                    {
                        "shape": "circle",
                        "colour": None,
                        "style": "filled",
                        "line": 0,
                        "box": [285, 25, 373, 112],
                        "center": [329, 69],
                        "size": "large",
                    }
                ],
                text_lines=[
                    {
                        "text": "matplotlib",
                        "box": [22, 19, 512, 116],
                        "font_size": 0,
                        "colour": "blue",
                        "ink": 13905,
                    }
                ],  # fmt: skip
                countable=False,
            ),
        ),
    ]
    sizes = {"astronaut.png": (512, 512), "coffee.png": (600, 400), "chelsea.png": (451, 300),
             "camera.png": (512, 512)}  # fmt: skip
    for name in PHOTOS:
        out.append((name, skimage, _truth("photo", *sizes[name], [], objects_known=False)))
    return [(name, (folder / name).read_bytes(), truth) for name, folder, truth in out]
