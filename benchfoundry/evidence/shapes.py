"""The evidence reader's shape test, OpenCV's and not the key's outline namer: a region is
scaled so that its equivalent diameter is about `_TRACE` pixels, its holes are filled, and its
outer contour is (1) simplified with `cv2.approxPolyDP` (Douglas-Peucker at 1.2% of the
perimeter): a convex polygon of 3, 4, 5, 6 or 8 corners whose area is the region's within
`_FIT` is named by its corners (four: a square or rectangle whose sides run along the axes, a
diamond otherwise), a polygon of 10 corners turning in at every other one a star, of 12 a cross;
or (2) measured against the ellipse `cv2.fitEllipse` puts through it: an outline whose area and
convex-hull perimeter both match that ellipse's within `_ROUND` is a circle (axes within
`_EVEN`) or an oval (axes beyond `_LONG`). A filled region whose hole is round is a ring. A region that is
overlapping shapes (a waist, two peaks in its distance map) is cut into them (`overlapping`).
Anything else (blobs, bitten shapes, regions under `MIN_AREA`) has no name (`None`).

The key's namer (`extractors/shapes.py`) measures the spread of the outline's radius in the
frame of its ellipse of inertia and simplifies with scikit-image; this module shares none of
its code and takes the shape's words only (the templates' vocabulary)."""

from __future__ import annotations

import math

import cv2
import numpy as np
from scipy import ndimage
from skimage.feature import peak_local_max
from skimage.segmentation import watershed

MIN_AREA = 150  # pixels of the reading's copy: below this an outline is too coarse to name
_TRACE = 96.0  # regions are measured at (about) this equivalent diameter, in pixels
_FIT = 0.06  # a polygon's area within this share of the region's
_ROUND = 0.035  # an ellipse's area and perimeter within this share of the outline's
_EVEN, _LONG = 1.12, 1.25  # axis ratios: a circle below the first, an oval beyond the second
_SOLID = 0.975  # a region less solid than this has a waist, and where its distance map has two
# peaks it is overlapping shapes (`overlapping`; two discs over each other can pass for an oval)
_WAIST = 0.92  # overlapping shapes meet where the region is this much thinner than either
_COARSE = 0.04  # a second, coarser simplification (share of the perimeter) for rounded corners
_TRIANGLE = 1.3  # an outline whose enclosing triangle is at most this much larger is one
_COARSE_FIT = 0.15  # its corners cut the rounded ones: its area within this share of the region's
_STRAIGHT = 0.02  # an octagon's sides stray from straight by less than this share of its radius
_HOLE = 0.08  # a hole this share of the filled region or more: a ring, or nothing


def _contour(mask: np.ndarray) -> np.ndarray | None:
    found, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    return max(found, key=cv2.contourArea) if found else None


def _ellipse_like(contour: np.ndarray) -> tuple[bool, float]:
    """Whether the contour is an ellipse (area and hull perimeter those of its fitted
    ellipse), and the ratio of that ellipse's axes."""
    if len(contour) < 5:
        return False, 0.0
    (_, _), (w, h), _ = cv2.fitEllipse(contour)
    a, b = max(w, h) / 2, min(w, h) / 2
    if b <= 0:
        return False, 0.0
    # Ramanujan's approximation of the ellipse's perimeter
    perimeter = math.pi * (3 * (a + b) - math.sqrt((3 * a + b) * (a + 3 * b)))
    hull = cv2.convexHull(contour)
    area_fit = abs(cv2.contourArea(contour) / (math.pi * a * b) - 1)
    length_fit = abs(cv2.arcLength(hull, True) / perimeter - 1)
    return area_fit <= _ROUND and length_fit <= _ROUND, a / b


def _four(corners: np.ndarray) -> str | None:
    edges = np.roll(corners, -1, axis=0) - corners
    lengths = np.linalg.norm(edges, axis=1)
    cosines = [
        abs(float(np.dot(edges[i], edges[(i + 1) % 4]))) / (lengths[i] * lengths[(i + 1) % 4])
        for i in range(4)
    ]
    angles = np.degrees(np.arctan2(edges[:, 1], edges[:, 0])) % 90
    along = bool(np.all((angles < 8) | (angles > 82)))
    even = lengths.max() <= 1.15 * lengths.min()
    if max(cosines) <= 0.15 and along:
        ratio = max(lengths[0], lengths[1]) / max(1e-9, min(lengths[0], lengths[1]))
        return "square" if ratio <= _EVEN else "rectangle" if ratio >= _LONG else None
    if even and bool(np.all(np.abs(angles - 45) < 12)):
        return "diamond"
    return None


def _bulge(contour: np.ndarray, approx: np.ndarray) -> float:
    """How far the outline strays from the polygon's sides, on average, as a share of the
    shape's equivalent radius: a polygon's sides are straight (near 0); a circle's arcs between
    eight corners bulge by about 5% of its radius."""
    points = contour[:, 0, :].astype(np.float32)
    polygon = approx.astype(np.float32)
    distance = np.abs(
        [cv2.pointPolygonTest(polygon, (float(x), float(y)), True) for x, y in points]
    )
    radius = math.sqrt(max(1.0, cv2.contourArea(contour)) / math.pi)
    return float(np.mean(distance)) / radius


def _corners(
    contour: np.ndarray, share: float, fit: float = _FIT
) -> tuple[np.ndarray, np.ndarray] | None:
    approx = cv2.approxPolyDP(contour, share * cv2.arcLength(contour, True), True)
    if (
        len(approx) < 3
        or abs(cv2.contourArea(approx) / max(1.0, cv2.contourArea(contour)) - 1) > fit
    ):
        return None
    return approx, approx[:, 0, :].astype(np.float64)


def _in_triangle(contour: np.ndarray) -> float:
    """The area of the smallest triangle around the outline over the outline's own: about 1 for
    a triangle however rounded its corners, 1.5 for a hexagon, 1.65 for a circle."""
    area, _ = cv2.minEnclosingTriangle(contour.astype(np.float32))
    return float(area) / max(1.0, cv2.contourArea(contour))


def _polygon(contour: np.ndarray) -> str | None:
    found = _corners(contour, 0.012)
    if found is None:  # corners a blur rounded leave a triangle or square short of its area
        found = _corners(contour, 0.012, _COARSE_FIT)
        if found is None or len(found[1]) > 4 or not cv2.isContourConvex(found[0]):
            return None
        if len(found[1]) == 4:  # its sides are those of the rectangle around it
            return _four(cv2.boxPoints(cv2.minAreaRect(contour)).astype(np.float64))
    approx, corners = found
    n = len(corners)
    convex = cv2.isContourConvex(approx)
    if convex and n in (5, 6, 8):
        # a triangle or a square whose corners a blur rounded: the rounded corners make short
        # sides of their own, which a coarser simplification drops
        coarse = _corners(contour, _COARSE, _COARSE_FIT)
        if coarse is not None and 3 <= len(coarse[1]) < n and cv2.isContourConvex(coarse[0]):
            approx, corners = coarse
            n = len(corners)
        elif n in (5, 6) and _in_triangle(contour) <= _TRIANGLE:
            return "triangle"  # so rounded that no simplification keeps its three corners
    if convex:
        if n == 4:
            return _four(corners)
        if n == 8 and _bulge(contour, approx) > _STRAIGHT:
            return None  # arcs between the corners: round, not an octagon
        return {3: "triangle", 5: "pentagon", 6: "hexagon", 8: "octagon"}.get(n)
    hull = cv2.convexHull(approx, returnPoints=False)
    inward = n - len(hull)  # corners that are not on the hull turn inwards
    if n == 10 and inward == 5:
        return "star"
    if n == 12 and inward == 4:
        return "cross"
    return None


def shape_word(mask: np.ndarray) -> str | None:
    """The shape a person would name for the region `mask` (a boolean array), or None."""
    area = int(mask.sum())
    if area < MIN_AREA:
        return None
    rows, columns = np.nonzero(mask)
    crop = np.pad(mask[rows.min() : rows.max() + 1, columns.min() : columns.max() + 1], 2)
    scale = max(1.0, _TRACE / (2 * math.sqrt(area / math.pi)))
    if scale > 1:
        size = (round(crop.shape[1] * scale), round(crop.shape[0] * scale))
        # bilinear enlargement, cut back at a half: the pixel staircase smoothed away
        crop = cv2.resize(crop.astype(np.float32), size, interpolation=cv2.INTER_LINEAR) >= 0.5
    filled = ndimage.binary_fill_holes(crop)
    if ndimage.label(filled)[1] != 1:
        return None  # pieces: not one shape
    contour = _contour(filled)
    if contour is None:
        return None
    hole = filled & ~crop
    if hole.sum() >= _HOLE * filled.sum():
        inner = _contour(hole)
        round_out, ratio_out = _ellipse_like(contour)
        round_in, ratio_in = _ellipse_like(inner) if inner is not None else (False, 0.0)
        return "ring" if round_out and round_in and ratio_out <= _EVEN else None
    named = _polygon(contour)
    if named is not None:
        return named
    round_, ratio = _ellipse_like(contour)
    if not round_:
        return None
    return "circle" if ratio <= _EVEN else "oval" if ratio >= _LONG else None


def overlapping(mask: np.ndarray) -> list[np.ndarray]:
    """The shapes of a region that is several overlapping ones (two discs of one colour drawn
    over each other read as one piece): where the region is less solid than `_SOLID` and its
    distance map has two or more peaks of at least 60% of its highest, a watershed of that
    map from the peaks cuts it at its waists (each seam thinner than `_WAIST` of the lower
    peak; an elongated shape's ridge has none). Otherwise the region itself, alone."""
    rows, columns = np.nonzero(mask)
    if len(rows) < MIN_AREA:
        return [mask]
    contour = _contour(ndimage.binary_fill_holes(mask))
    hull = cv2.convexHull(contour) if contour is not None else None
    if hull is None or cv2.contourArea(contour) >= _SOLID * cv2.contourArea(hull):
        return [mask]
    distance = ndimage.distance_transform_edt(mask)
    radius = float(distance.max())
    peaks = peak_local_max(
        distance,
        min_distance=max(2, int(0.5 * radius)),
        threshold_abs=0.6 * radius,
        labels=mask.astype(np.int32),
        exclude_border=False,
    )
    if len(peaks) < 2:
        return [mask]
    markers = np.zeros(mask.shape, np.int32)
    markers[tuple(peaks.T)] = np.arange(1, len(peaks) + 1)
    parts = watershed(-distance, markers, mask=mask)
    lowest = float(min(distance[tuple(peaks.T)]))
    for k in range(1, len(peaks) + 1):
        seam = ndimage.binary_dilation(parts == k) & (parts != k) & mask
        if seam.any() and distance[seam].max() > _WAIST * lowest:
            return [mask]  # no waist between them: one shape's ridge, not two shapes
    return [parts == k for k in range(1, len(peaks) + 1) if (parts == k).sum() >= MIN_AREA]
