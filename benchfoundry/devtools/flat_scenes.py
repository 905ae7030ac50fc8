"""The objects of flat scenes, the images a newcomer draws first: one or two large shapes of a
pure colour (0, 0, 255 blue, not a mixed shade) near the middle of a white square, drawn either
with hard edges or anti-aliased (drawn four times as large, then scaled down). Their edges are
where a segmenter cuts slivers and rings that are not objects."""

from __future__ import annotations

import random

from PIL import Image, ImageDraw

from benchfoundry.devtools.scene_shapes import SHAPES, SceneObject, draw_shape

PURE: dict[str, tuple[int, int, int]] = {
    "red": (255, 0, 0),
    "green": (0, 160, 0),
    "blue": (0, 0, 255),
    "yellow": (255, 220, 0),
    "orange": (255, 128, 0),
    "purple": (128, 0, 128),
    "black": (0, 0, 0),
}
SIDE = 256
WHITE = (255, 255, 255)
SUPERSAMPLE = 4


def flat_objects(rng: random.Random) -> list[SceneObject]:
    """One large shape near the middle, or two side by side, each a colour of its own."""
    colours = rng.sample(sorted(PURE), k=2)
    if rng.random() < 0.6:
        half = rng.randint(40, 80)
        cx, cy = SIDE // 2 + rng.randint(-16, 16), SIDE // 2 + rng.randint(-16, 16)
        return [_object(rng.choice(SHAPES), colours[0], cx, cy, half)]
    half = rng.randint(24, 44)
    cy = SIDE // 2 + rng.randint(-20, 20)
    return [
        _object(rng.choice(SHAPES), colours[0], SIDE // 4 + rng.randint(-8, 8), cy, half),
        _object(rng.choice(SHAPES), colours[1], 3 * SIDE // 4 + rng.randint(-8, 8), cy, half),
    ]


def _object(shape: str, colour: str, cx: int, cy: int, half: int) -> SceneObject:
    return SceneObject(
        shape, colour, "large", (cx, cy), (cx - half, cy - half, cx + half, cy + half)
    )


def render_flat(objects: list[SceneObject], antialias: bool) -> Image.Image:
    """Draw a flat scene: hard-edged, or anti-aliased by drawing large and scaling down."""
    k = SUPERSAMPLE if antialias else 1
    image = Image.new("RGB", (SIDE * k, SIDE * k), WHITE)
    draw = ImageDraw.Draw(image)
    for obj in objects:
        big = SceneObject(
            obj.shape,
            obj.colour,
            obj.size,
            (obj.center[0] * k, obj.center[1] * k),
            tuple(v * k for v in obj.box),  # type: ignore[arg-type]
        )
        draw_shape(draw, big, PURE[obj.colour])
    return image.resize((SIDE, SIDE), Image.Resampling.LANCZOS) if antialias else image
