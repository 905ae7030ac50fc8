"""The objects of contact scenes: one or two groups of two shapes that contain, overlap or touch
each other, and a few loose shapes apart from everything, each object a colour of its own. Each group is drawn, its relation read
back from the drawn masks, and drawn again until it is the one intended and easy to see: an
inner shape well inside its outer one, an overlap of a fair share with most of the lower shape
showing around the upper one's corner (not cut off straight, which would look like a touch), a
touch along an edge or at a point of a flat side."""

from __future__ import annotations

import random

import numpy as np

from benchfoundry.devtools.scene_shapes import (
    PALETTE,
    SHAPES,
    SceneObject,
    relations_of,
    shape_mask,
    visible_masks,
)

INNER_HALF = {"square": (9, 10), "circle": (10, 11), "triangle": (13, 14)}  # stays one region
MARGIN = 12  # pixels between groups and loose shapes


def _object(shape: str, colour: str, cx: int, cy: int, half: int) -> SceneObject:
    size = "small" if half <= 16 else "medium" if half <= 28 else "large"
    return SceneObject(shape, colour, size, (cx, cy), (cx - half, cy - half, cx + half, cy + half))


def _contain(rng: random.Random, colours: list[str]) -> list[SceneObject]:
    outer_shape, inner_shape = rng.choice(SHAPES), rng.choice(SHAPES)
    half = rng.randint(46, 58)
    inner_half = rng.randint(*INNER_HALF[inner_shape])
    if outer_shape == "triangle":  # the lower middle of a triangle is the roomy part
        dx, dy = rng.uniform(-0.15, 0.15), rng.uniform(0.2, 0.45)
    else:
        dx, dy = rng.uniform(-0.35, 0.35), rng.uniform(-0.35, 0.35)
    return [
        _object(outer_shape, colours[0], 0, 0, half),
        _object(inner_shape, colours[1], round(dx * half), round(dy * half), inner_half),
    ]


def _overlap(rng: random.Random, colours: list[str]) -> list[SceneObject]:
    below_half, above_half = rng.randint(22, 38), rng.randint(16, 30)
    angle = rng.uniform(0, 2 * np.pi)
    reach = rng.uniform(0.5, 0.8) * (below_half + above_half)
    return [
        _object(rng.choice(SHAPES), colours[0], 0, 0, below_half),
        _object(
            rng.choice(SHAPES),
            colours[1],
            round(reach * np.cos(angle)),
            round(reach * np.sin(angle)),
            above_half,
        ),
    ]


def _touch(rng: random.Random, colours: list[str]) -> list[SceneObject]:
    """A square and a shape against one of its sides, the other's edge one pixel beyond it."""
    half, other_half = rng.randint(18, 34), rng.randint(14, 30)
    shape = rng.choice(SHAPES)
    side = rng.choice(("left", "right", "top", "bottom"))
    slide = rng.randint(-(half - 6), half - 6)
    if shape == "triangle" and side in ("left", "right"):  # its corner touches: the base's end
        slide -= other_half
    reach = half + other_half + 1
    cx, cy = {
        "left": (-reach, slide),
        "right": (reach, slide),
        "top": (slide, -reach),
        "bottom": (slide, reach),
    }[side]
    return [
        _object("square", colours[0], 0, 0, half),
        _object(shape, colours[1], cx, cy, other_half),
    ]


GROUPS = {"contains": _contain, "overlaps": _overlap, "touches": _touch}


def _shifted(objects: list[SceneObject], dx: int, dy: int) -> list[SceneObject]:
    return [
        SceneObject(
            o.shape,
            o.colour,
            o.size,
            (o.center[0] + dx, o.center[1] + dy),
            (o.box[0] + dx, o.box[1] + dy, o.box[2] + dx, o.box[3] + dy),
        )
        for o in objects
    ]


def _bounds(objects: list[SceneObject]) -> tuple[int, int, int, int]:
    return (
        min(o.box[0] for o in objects),
        min(o.box[1] for o in objects),
        max(o.box[2] for o in objects),
        max(o.box[3] for o in objects),
    )


def _clear(box: tuple[int, int, int, int], placed: list[tuple[int, int, int, int]]) -> bool:
    return not any(
        box[0] < p[2] + MARGIN
        and p[0] < box[2] + MARGIN
        and box[1] < p[3] + MARGIN
        and p[1] < box[3] + MARGIN
        for p in placed
    )


def _plain(group: list[SceneObject], relation: str, width: int, height: int) -> bool:
    """The group shows its relation and no other, clearly."""
    found = relations_of(group, width, height)
    if [r.relation for r in found] != [relation]:
        return False
    below, above = (shape_mask(o, width, height) for o in group)
    if relation == "contains":
        grown = above.copy()  # the inner shape, grown by three pixels, still inside
        for _ in range(3):
            grown[1:, :] |= grown[:-1, :].copy()
            grown[:-1, :] |= grown[1:, :].copy()
            grown[:, 1:] |= grown[:, :-1].copy()
            grown[:, :-1] |= grown[:, 1:].copy()
        return not (grown & ~below).any()
    if relation == "overlaps":
        shared = int((below & above).sum())
        shown = visible_masks(group, width, height)[0]
        ys, xs = np.nonzero(shown)
        seen = (xs.min(), ys.min(), xs.max(), ys.max())  # the lower shape's box as it shows
        top = group[1].box
        crossing = (
            min(seen[2], top[2]) - max(seen[0], top[0]),
            min(seen[3], top[3]) - max(seen[1], top[1]),
        )
        return (
            shared >= 0.15 * min(below.sum(), above.sum())
            and shown.sum() >= 0.55 * below.sum()
            and min(crossing) >= 10
            and all(abs(p - q) >= 8 for p, q in zip(seen, top, strict=True))
        )
    return True


def contact_objects(rng: random.Random, width: int, height: int) -> list[SceneObject]:
    """One or two contact groups and up to three loose shapes, in drawing order."""
    objects: list[SceneObject] = []
    placed: list[tuple[int, int, int, int]] = []
    colours = rng.sample(sorted(PALETTE), k=len(PALETTE))  # each object a colour of its own
    for relation in rng.sample(sorted(GROUPS), k=rng.randint(1, 2)):
        for _ in range(200):
            group = GROUPS[relation](rng, colours[len(objects) : len(objects) + 2])
            x0, y0, x1, y1 = _bounds(group)
            dx = rng.randint(4 - x0, width - 5 - x1) if width - 9 > x1 - x0 else None
            dy = rng.randint(4 - y0, height - 5 - y1) if height - 9 > y1 - y0 else None
            if dx is None or dy is None:
                continue
            group = _shifted(group, dx, dy)
            if _clear(_bounds(group), placed) and _plain(group, relation, width, height):
                objects += group
                placed.append(_bounds(group))
                break
    for _ in range(rng.randint(0, 3)):
        for _ in range(100):
            half = rng.randint(14, 30)
            cx = rng.randint(half + 4, width - half - 5)
            cy = rng.randint(half + 4, height - half - 5)
            loose = _object(rng.choice(SHAPES), colours[len(objects)], cx, cy, half)
            if _clear(loose.box, placed):
                objects.append(loose)
                placed.append(loose.box)
                break
    return objects
