"""The shapes of synthetic scenes: how each is drawn, its pixels, and which shapes contain,
overlap or touch which (the ground truth of contact scenes, read from the drawn masks)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw

PALETTE: dict[str, tuple[int, int, int]] = {
    "red": (215, 38, 38),
    "green": (34, 150, 60),
    "blue": (35, 75, 215),
    "yellow": (250, 200, 0),  # 4.3 CIEDE2000 clear of the survey's "dark yellow"
    "orange": (240, 125, 15),
    "purple": (135, 55, 175),
    "black": (20, 20, 20),
}
SHAPES = ("circle", "square", "triangle")


@dataclass(frozen=True)
class SceneObject:
    shape: str
    colour: str
    size: str
    center: tuple[int, int]
    box: tuple[int, int, int, int]


@dataclass(frozen=True)
class Relation:
    """Objects `a` and `b` (indexes into the scene's objects, drawn in that order): `contains`
    (b's shape lies inside a's), `overlaps` (their shapes share pixels, the later drawn on top)
    or `touches` (they share an edge or a point, and no pixel)."""

    a: int
    b: int
    relation: str


def draw_shape(
    draw: ImageDraw.ImageDraw, obj: SceneObject, fill: tuple[int, int, int] | int
) -> None:
    """Draw one shape: a circle or square filling its box, a triangle with its apex up."""
    x0, y0, x1, y1 = obj.box
    if obj.shape == "circle":
        draw.ellipse(obj.box, fill=fill)
    elif obj.shape == "square":
        draw.rectangle(obj.box, fill=fill)
    else:
        draw.polygon([(obj.center[0], y0), (x1, y1), (x0, y1)], fill=fill)


def shape_mask(obj: SceneObject, width: int, height: int) -> np.ndarray:
    """The pixels of an object's whole shape, as drawn (hidden parts included)."""
    canvas = Image.new("L", (width, height), 0)
    draw_shape(ImageDraw.Draw(canvas), obj, 255)
    return np.asarray(canvas) > 0


def visible_masks(objects: list[SceneObject], width: int, height: int) -> list[np.ndarray]:
    """The pixels of each object that show in the rendered image (later objects on top)."""
    return visible([shape_mask(o, width, height) for o in objects])


def visible(masks: list[np.ndarray]) -> list[np.ndarray]:
    """Each mask less what later ones (drawn on top) cover."""
    shown = []
    for index, mask in enumerate(masks):
        covered = np.zeros_like(mask)
        for later in masks[index + 1 :]:
            covered |= later
        shown.append(mask & ~covered)
    return shown


def _adjacent(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether a pixel of `a` has a pixel of `b` among its eight neighbours."""
    grown = a.copy()
    grown[1:, :] |= a[:-1, :]
    grown[:-1, :] |= a[1:, :]
    grown[:, 1:] |= grown[:, :-1].copy()
    grown[:, :-1] |= grown[:, 1:].copy()
    return bool((grown & b).any())


def relations_of(objects: list[SceneObject], width: int, height: int) -> list[Relation]:
    """Which objects contain, overlap or touch which, from their drawn shapes."""
    return relations_between([shape_mask(o, width, height) for o in objects])


def relations_between(masks: list[np.ndarray]) -> list[Relation]:
    """Which masks contain, overlap or touch which (indexes in the order drawn)."""
    found = []
    for i, a in enumerate(masks):
        for j in range(i + 1, len(masks)):
            b = masks[j]
            if (a & b).any():
                if not (b & ~a).any():
                    found.append(Relation(i, j, "contains"))
                elif not (a & ~b).any():
                    found.append(Relation(j, i, "contains"))
                else:
                    found.append(Relation(i, j, "overlaps"))
            elif _adjacent(a, b):
                found.append(Relation(i, j, "touches"))
    return found
