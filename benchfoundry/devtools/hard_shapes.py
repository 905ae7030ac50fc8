"""The shapes of the hard drawings, beyond the circle, square and triangle of the synthetic
scenes: an oval, a rectangle, a diamond, polygons (hexagon, pentagon, octagon), a star, a cross
and a ring, filled or drawn as an outline. Each is a truth object (the dict the truth checkers
read), drawn by one function at any scale, so that its pixels in the truth checks are the
pixels of the drawing. The synthetic scenes' objects (no `style`) are drawn as they always were."""

from __future__ import annotations

import math

import numpy as np
from PIL import Image, ImageDraw

from benchfoundry.devtools.scene_shapes import SceneObject, draw_shape

POLYGON_SIDES = {"pentagon": 5, "hexagon": 6, "octagon": 8}
Point = tuple[float, float]


def outline_points(shape: str, cx: float, cy: float, rx: float, ry: float) -> list[Point]:
    """The corners of a polygonal shape centred on (cx, cy), `rx` and `ry` its half extents
    (before the polygon's own proportions): a vertex up, or a flat top for the octagon."""
    if shape in POLYGON_SIDES:
        n = POLYGON_SIDES[shape]
        start = -math.pi / 2 + (math.pi / n if shape == "octagon" else 0.0)
        angles = [start + 2 * math.pi * k / n for k in range(n)]
        return [(cx + rx * math.cos(a), cy + ry * math.sin(a)) for a in angles]
    if shape == "star":
        angles = [-math.pi / 2 + math.pi * k / 5 for k in range(10)]
        radii = [1.0 if k % 2 == 0 else 0.45 for k in range(10)]
        return [
            (cx + rx * r * math.cos(a), cy + ry * r * math.sin(a))
            for a, r in zip(angles, radii, strict=True)
        ]
    if shape == "diamond":
        return [(cx, cy - ry), (cx + rx, cy), (cx, cy + ry), (cx - rx, cy)]
    if shape == "cross":
        a, b = rx / 3, ry / 3
        return [
            (cx - a, cy - ry), (cx + a, cy - ry), (cx + a, cy - b), (cx + rx, cy - b),
            (cx + rx, cy + b), (cx + a, cy + b), (cx + a, cy + ry), (cx - a, cy + ry),
            (cx - a, cy + b), (cx - rx, cy + b), (cx - rx, cy - b), (cx - a, cy - b),
        ]  # fmt: skip
    if shape == "triangle":
        return [(cx, cy - ry), (cx + rx, cy + ry), (cx - rx, cy + ry)]
    raise ValueError(f"{shape} is not a polygonal shape")


def size_word(area: float, width: int, height: int) -> str:
    share = area / (width * height)
    return "large" if share >= 0.04 else "medium" if share >= 0.012 else "small"


def make_object(
    shape: str,
    colour: str | None,
    center: tuple[float, float],
    rx: float,
    ry: float | None = None,
    style: str = "filled",
    line: int = 0,
    canvas: tuple[int, int] = (384, 288),
) -> dict:
    """A truth object: its shape word, colour name (None where a person would name none), size
    word, centre, box (the drawn pixels' bounds, ends included, as the synthetic scenes' boxes)
    and how it is drawn: `style` filled or outline, `line` the outline's (or ring's) width,
    `points` for a polygon."""
    ry = rx if ry is None else ry
    cx, cy = center
    obj: dict = {"shape": shape, "colour": colour, "style": style, "line": line}
    if shape in ("circle", "oval", "ring", "square", "rectangle"):
        obj["box"] = [round(cx - rx), round(cy - ry), round(cx + rx), round(cy + ry)]
    else:
        obj["points"] = [
            [round(x, 2), round(y, 2)] for x, y in outline_points(shape, cx, cy, rx, ry)
        ]
    if shape == "ring" and not line:
        obj["line"] = max(3, round(0.35 * min(rx, ry)))
    pixels = truth_mask(obj, *canvas)
    ys, xs = np.nonzero(pixels)
    obj["box"] = [int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())]
    obj["center"] = [round(cx), round(cy)]
    obj["size"] = size_word(float(truth_mask(obj, *canvas, ink=False).sum()), *canvas)
    return obj


def draw_object(
    draw: ImageDraw.ImageDraw, obj: dict, fill: tuple[int, int, int] | int, scale: int = 1
) -> None:
    """Draw a truth object at `scale` times its size (an anti-aliased drawing is drawn large)."""
    if "style" not in obj:  # a synthetic scene's object
        draw_shape(draw, _scene_object(obj, scale), fill)
        return
    outline = obj["style"] == "outline" or obj["shape"] == "ring"
    width = max(1, obj["line"] * scale)
    if "points" in obj:
        points = [(x * scale, y * scale) for x, y in obj["points"]]
        if outline:
            draw.polygon(points, outline=fill, width=width)
        else:
            draw.polygon(points, fill=fill)
        return
    box = [v * scale for v in obj["box"]]
    box[2], box[3] = box[2] + scale - 1, box[3] + scale - 1  # the last pixel, grown
    paint = draw.ellipse if obj["shape"] in ("circle", "oval", "ring") else draw.rectangle
    if outline:
        paint(box, outline=fill, width=width)
    else:
        paint(box, fill=fill)


def _scene_object(obj: dict, scale: int) -> SceneObject:
    box = tuple(v * scale for v in obj["box"])
    center = (obj["center"][0] * scale, obj["center"][1] * scale)
    return SceneObject(obj["shape"], obj["colour"], obj["size"], center, box)  # type: ignore[arg-type]


def truth_mask(obj: dict, width: int, height: int, ink: bool = True) -> np.ndarray:
    """The pixels of a truth object: those painted (`ink`), or the region a person sees it
    hold (an outline's inside counts; a ring's hole does not: a ring is its band)."""
    canvas = Image.new("L", (width, height), 0)
    shown = obj if ink or obj.get("style") != "outline" else {**obj, "style": "filled"}
    draw_object(ImageDraw.Draw(canvas), shown, 255)
    return np.asarray(canvas) > 0


def _cell(colour: str, box: list[int]) -> dict:
    center = [(box[0] + box[2]) // 2, (box[1] + box[3]) // 2]
    size = "small" if box[2] - box[0] < 30 else "medium"
    return {"shape": "square", "colour": colour, "style": "filled", "line": 0, "box": box,
            "center": center, "size": size}  # fmt: skip


def board_cells(
    left: int, top: int, cell: int, rows: int, cols: int, first: str, second: str
) -> list[dict]:
    """The squares of a checkerboard, `first` the colour of its top left square."""
    return [
        _cell(
            first if (i + j) % 2 == 0 else second,
            [left + j * cell, top + i * cell, left + (j + 1) * cell - 1, top + (i + 1) * cell - 1],
        )
        for i in range(rows)
        for j in range(cols)
    ]


def scene_truth(
    family: str, width: int, height: int, objects: list[dict], lines: list[dict], **more
) -> dict:
    """A hard drawing's truth: the synthetic scenes' fields, its family, and whether a person
    can count its objects (`countable`) and tell them at all (`objects_known`)."""
    return {
        "family": family,
        "kind": "hard",
        "width": width,
        "height": height,
        "objects": objects,
        "text_lines": lines,
        "countable": True,
        "objects_known": True,
    } | more
