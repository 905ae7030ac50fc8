"""Where two translucent shapes overlap, the overlap shows a colour of its own: a segmenter finds
it as a third region, and a person counts two shapes, not three. A region is such an overlap
when it touches two regions whose boxes cross each other, lies within the box both span, and
its colour is theirs blended: seen from the backdrop, it is a mix of the two shapes' colours
(`overlap - backdrop = s (a - backdrop) + t (b - backdrop)`, s and t between 0.15 and 1.15, with
little left over), as alpha compositing or a multiplied print gives. The describer marks it
`BLEND`, and it is no object (`objects.objects_of`)."""

from __future__ import annotations

import numpy as np
from scipy import ndimage

BLEND = "overlap-blend"
RESIDUAL = 0.25  # what the two colours leave unexplained, as a share of the overlap's own change
LOW, HIGH = 0.15, 1.15  # each colour's part in the blend
EDGE = 3  # pixels of the image looked at `ANALYSIS_SIDE` across: an edge's blur


def backdrop(pixels: np.ndarray) -> np.ndarray:
    """The median colour of the image's outermost pixels."""
    frame = np.concatenate([pixels[0], pixels[-1], pixels[:, 0], pixels[:, -1]])
    return np.median(frame.astype(np.float64), axis=0)


def blended(colour: np.ndarray, a: np.ndarray, b: np.ndarray, ground: np.ndarray) -> bool:
    """Whether `colour` is `a` and `b` blended over `ground` (all RGB)."""
    basis = np.stack([a - ground, b - ground], axis=1)
    target = colour - ground
    if np.linalg.norm(target) < 20 or np.linalg.matrix_rank(basis, tol=10) < 2:
        return False  # the backdrop itself, or two shapes of one colour
    (s, t), *_ = np.linalg.lstsq(basis, target, rcond=None)
    left = np.linalg.norm(basis @ np.array([s, t]) - target)
    return LOW <= s <= HIGH and LOW <= t <= HIGH and left <= RESIDUAL * np.linalg.norm(target)


def _near(a: tuple[int, int, int, int], b: tuple[int, int, int, int], reach: int = 3) -> bool:
    return max(a[0], b[0]) - min(a[2], b[2]) <= reach and max(a[1], b[1]) - min(a[3], b[3]) <= reach


def _box(mask: np.ndarray) -> tuple[int, int, int, int]:
    rows, columns = np.nonzero(mask)
    return int(columns.min()), int(rows.min()), int(columns.max()), int(rows.max())


def overlaps(pixels: np.ndarray, masks: list[np.ndarray], colours: list[np.ndarray]) -> set[int]:
    """The indexes of the regions that are the blended overlap of two others."""
    found: set[int] = set()
    present = [k for k, m in enumerate(masks) if m.shape == pixels.shape[:2] and m.any()]
    if len(present) < 3:
        return found
    ground = backdrop(pixels)
    boxes = {k: _box(masks[k]) for k in present}
    for c in present:
        near = [k for k in present if k != c and _near(boxes[c], boxes[k])]
        if len(near) < 2:
            continue
        grown = ndimage.binary_dilation(masks[c], iterations=2)
        neighbours = [k for k in near if (grown & masks[k]).any()]
        for i, a in enumerate(neighbours):
            for b in neighbours[i + 1 :]:
                (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = boxes[a], boxes[b]
                # their boxes cross (the two shapes' parts left showing may only meet, within
                # an edge's blur, at their overlap's tips: `EDGE` pixels)
                if min(ax1, bx1) < max(ax0, bx0) - EDGE or min(ay1, by1) < max(ay0, by0) - EDGE:
                    continue
                x0, y0, x1, y1 = boxes[c]
                hull = (min(ax0, bx0) - 2, min(ay0, by0) - 2, max(ax1, bx1) + 2, max(ay1, by1) + 2)
                if not (x0 >= hull[0] and y0 >= hull[1] and x1 <= hull[2] and y1 <= hull[3]):
                    continue
                if blended(colours[c], colours[a], colours[b], ground):
                    found.add(c)
    return found
