"""How much of each pixel along a flat region's edge the region covers, read from the pixel's
colour: a shape's edge pixel, once a picture is reduced (or was drawn anti-aliased), is a blend
of the shape's colour and the colour beside it in proportion to the share of it the shape
covers. Counted so, a region's area no longer depends on where a threshold cuts its blended
edge: a 7 px triangle in a 96 px icon has an edge of about as many pixels as its inside, and
two segmenters' masks of it differ by half its area, where its covered area is its drawn area
within a percent or two (a quarter of a 384 px drawing: 26.7 px for a triangle drawn 421/16 =
26.3; 41.1 for a disc of 41.1; 290.2 for one of 290.3).

Each pixel near the region's edge is placed on the line from the colour just outside it (the
nearest pixel clear of the edge, so a neighbouring shape's colour where the region meets
one, or the paper's where that lies on the line) to the region's own colour; the region's
covered area is the sum of those places. Only a region of one flat colour is read so (a part of
a photograph has no one colour to place a pixel against): the describer decides which."""

from __future__ import annotations

import math

import numpy as np
from scipy import ndimage
from skimage.measure import find_contours

EDGE = 2  # pixels on each side of the mask's border that may be a blend of the two colours
CONTRAST = 24.0  # below this distance between the two colours, a pixel's blend is not read
OFF_LINE = 0.3  # a blend lies within this share of the two colours' distance of their line


def coverage(pixels: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, tuple[slice, slice]] | None:
    """The share (0-1) of each pixel around the region `mask`, a region of one flat colour, that
    the region covers, over the region's box widened by a few pixels (the map and that box's
    slices into `pixels`); None where the region reaches the image's border, or nothing around it
    is clear of its edge."""
    if mask.shape != pixels.shape[:2] or not mask.any():
        return None
    rows, columns = np.nonzero(mask)
    height, width = mask.shape
    if (
        min(rows.min(), columns.min()) == 0
        or rows.max() == height - 1
        or columns.max() == width - 1
    ):
        return None  # cut by the frame: its mask says where it ends
    pad = 2 * EDGE + 2
    top, left = max(0, rows.min() - pad), max(0, columns.min() - pad)
    cut = (slice(top, rows.max() + pad + 1), slice(left, columns.max() + pad + 1))
    own, local = mask[cut], pixels[cut].astype(np.float32)
    depth = ndimage.distance_transform_edt(np.pad(own, 1))[1:-1, 1:-1]
    inside = depth > min(EDGE, 0.6 * depth.max())  # clear of the edge's blend
    colour = np.median(local[inside], axis=0)
    near = ndimage.binary_dilation(own, iterations=EDGE)
    outside = ~ndimage.binary_dilation(own, iterations=EDGE + 1)
    if not outside.any():
        return None
    # Two readings of what lies beside each pixel: the nearest pixel clear of the edge (a
    # neighbouring shape's colour where the region meets one), and the commonest colour around
    # the region (the paper's, where a neighbour's own blended edge is the nearest). Each pixel
    # takes the one on whose line to the region's colour it lies.
    _, (r, c) = ndimage.distance_transform_edt(~outside, return_indices=True)
    ring = outside & ndimage.binary_dilation(own, iterations=2 * EDGE + 2)
    around = np.median(local[ring if ring.any() else outside], axis=0)
    share, off, length = _placed(local, colour, local[r, c])
    share_p, off_p, length_p = _placed(local, colour, around)
    contrast = CONTRAST**2
    # the paper's line where the pixel lies nearer it; never where the nearest pixel clear of
    # the edge is of the region's own colour (the region goes on there, cut by the segmenter
    # from more of its colour: the mask says where it ends)
    take = (off_p < off) & (length_p >= contrast) & (length >= contrast)
    share = np.where(take, share_p, share)
    # a pixel on neither line is no blend of the region's colour (a neighbour's colour that
    # the segmenter's mask took in): not the region's
    stray = np.minimum(off, np.where(length_p >= contrast, off_p, np.inf)) > np.maximum(
        CONTRAST, OFF_LINE * np.sqrt(length)
    )
    share = np.where(stray, 0.0, share)
    share = np.where(length < contrast, own.astype(np.float32), share)
    share = np.where(near, share, 0.0)
    return share.astype(np.float32), cut


def _placed(
    local: np.ndarray, colour: np.ndarray, beside: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each pixel's place (0-1) on the line from `beside` to `colour`, how far off that line it
    lies, and the line's squared length."""
    towards = colour - beside
    length = np.einsum("...c,...c->...", towards, towards) * np.ones(local.shape[:2])
    place = np.einsum("...c,...c->...", local - beside, towards) / np.maximum(length, 1e-6)
    place = np.clip(place, 0.0, 1.0)
    off = np.linalg.norm(local - beside - place[..., None] * towards, axis=-1)
    return place, off, length


def covered(
    found: tuple[np.ndarray, tuple[slice, slice]],
) -> tuple[float, tuple[float, ...]] | None:
    """From a region's coverage map (`coverage`): its area counted by coverage and its box (x0,
    y0, x1, y1) where its outline crosses half of a pixel (between pixels: a 7 px square's side,
    which a resize leaves a blend over two pixels, lands within a quarter of a pixel), in the
    pixels the map was read in; None where no outline crosses."""
    share, (rows, columns) = found
    contours = find_contours(np.pad(share, 1), 0.5)
    if not contours:
        return None
    points = np.concatenate(contours)
    # a contour point at index i + 0.5 is the edge between pixels i and i + 1 (edge i + 1); -1
    # for the padding
    top, left = points.min(axis=0) - 0.5 + (rows.start, columns.start)
    bottom, right = points.max(axis=0) - 0.5 + (rows.start, columns.start)
    # to a quarter of a pixel: a drawing's edges lie on whole pixels, and the few hundredths
    # JPEG's noise moves them by must not carry a box across a margin (two shapes drawn 5 px
    # apart, where 5 px is the least gap between shapes that do not meet)
    box = tuple(round(4 * v) / 4 for v in (left, top, right, bottom))
    return float(share.sum()), box


def outline_spread(share: np.ndarray) -> tuple[float, float, float]:
    """The region's outline where it covers half of each pixel (a contour of the coverage map,
    between pixels, so a 10 px disc's outline is not a staircase), as `shapes` reads an
    outline: the spread of its distance from the centre over the mean, in the frame where the
    region's ellipse of inertia (its coverage-weighted moments) is a circle; with that
    ellipse's aspect and the diameter of a disc of the region's covered area."""
    contours = find_contours(np.pad(share, 1), 0.5)
    if not contours or share.sum() <= 0:
        return math.inf, math.inf, 0.0
    points = max(contours, key=len)
    # evenly spaced along the outline: a contour's vertices crowd where it crosses pixels
    steps = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(points, axis=0), axis=1))])
    if steps[-1] <= 0:
        return math.inf, math.inf, 0.0
    along = np.linspace(0.0, steps[-1], 256, endpoint=False)
    points = np.stack([np.interp(along, steps, points[:, k]) for k in (0, 1)], axis=1)
    rows, columns = np.mgrid[: share.shape[0], : share.shape[1]] + 1.0  # the padding's offset
    weights = share.ravel()
    covariance = np.cov(np.stack([rows.ravel(), columns.ravel()]), aweights=weights)
    centre = np.array(
        [np.average(rows.ravel(), weights=weights), np.average(columns.ravel(), weights=weights)]
    )
    values, vectors = np.linalg.eigh(covariance)
    if values.min() <= 1e-9:
        return math.inf, math.inf, 0.0
    whitened = (points - centre) @ vectors / np.sqrt(values)
    radii = np.hypot(whitened[:, 0], whitened[:, 1])
    aspect = math.sqrt(values.max() / values.min())
    diameter = 2 * math.sqrt(float(share.sum()) / math.pi)
    return float(radii.std() / radii.mean()), aspect, diameter
