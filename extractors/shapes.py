"""What a person would call a region's shape, from its outline: circle, oval, square, rectangle,
diamond, triangle, pentagon, hexagon, octagon, star, cross or ring, or nothing (`None`) when the
outline is none of these (two shapes run together, a bitten shape, a blob, a region too small
to tell). A template names a shape only by this word, so an option set never lacks its truth
and a hexagon is never "round".

How: the region's holes are filled (a ring is a round outline with a round hole); an outline
whose distance from the centre, measured in the frame of the region's own ellipse of inertia,
barely varies is a circle or an oval (its aspect tells which); otherwise the outline is
simplified to a polygon (Douglas-Peucker, `skimage.measure.approximate_polygon`) and named by
its corners: how many, how many turn inwards, and for four, whether the sides run along the
image's axes. Outlines are traced at a size where a pixel's step is small against the shape:
small regions are enlarged first."""

from __future__ import annotations

import math

import numpy as np
from scipy import ndimage
from skimage.measure import find_contours

from benchfoundry.extractors.base import ANALYSIS_SIDE

SHAPE_NAMES = (
    "circle",
    "oval",
    "square",
    "rectangle",
    "diamond",
    "triangle",
    "pentagon",
    "hexagon",
    "octagon",
    "star",
    "cross",
    "ring",
)
HINT_OF = {
    "circle": "round",
    "oval": "round",
    "square": "rectangular",
    "rectangle": "rectangular",
    "triangle": "triangular",
}
# Below this share of the image, a region's outline is too coarse to name: 150 pixels of the
# copy every region is named in (its longer side `ANALYSIS_SIDE` long), about 12 x 12.
MIN_SHARE = 150 / ANALYSIS_SIDE**2
MIN_AREA = round(MIN_SHARE * ANALYSIS_SIDE**2)
# An outline whose radius (in its ellipse's frame) spreads less than this share is round; the
# pixel staircase spreads a small shape's radius by about 0.09/r on its own (r in pixels). Between
# once and 1.5 times this, an outline is neither plainly round nor plainly cornered: no name.
ROUND, STAIRCASE = 0.009, 0.09
FIT = 0.07  # a polygon named by its corners covers the region's area within this share
_TRACE = 80.0  # regions are traced at (about) this equivalent diameter or more, in pixels
_EVEN = 1.12  # width/height within this ratio: a circle, a square
_LONG = 1.25  # beyond this ratio: an oval, a rectangle (between the two: no name)


def shape_name(mask: np.ndarray) -> str | None:
    """The shape a person would name for the region `mask` (a boolean array), or None."""
    area = int(mask.sum())
    if area < MIN_AREA:
        return None
    rows, columns = np.nonzero(mask)
    crop = mask[rows.min() : rows.max() + 1, columns.min() : columns.max() + 1]
    filled = ndimage.binary_fill_holes(crop)
    labels, parts = ndimage.label(filled)
    if parts != 1:  # pieces: not one shape
        return None
    hole = int(filled.sum()) - area
    if hole > 0.08 * filled.sum():
        outer = _outline(filled)
        inner = _outline(filled & ~crop)
        limit = ROUND + STAIRCASE / math.sqrt(hole / math.pi)
        ring = outer is not None and inner is not None
        ring = ring and _spread(outer) <= limit and _spread(inner) <= limit  # type: ignore[arg-type]
        return "ring" if ring else None
    outline = _outline(filled)
    if outline is None:
        return None
    spread = _spread(outline)
    limit = ROUND + STAIRCASE / math.sqrt(filled.sum() / math.pi)
    if spread <= limit:
        ratio = _aspect(outline)
        return "circle" if ratio <= _EVEN else "oval" if ratio >= _LONG else None
    return _polygon(outline[0]) if spread >= 1.5 * limit else None


# A region too few pixels across for its outline to be traced (a 7 px shape in a 96 px icon)
# still shows two shapes plainly, in the image's own pixels (not an enlarged copy's, whose
# smoothing rounds its corners):
# - a box every pixel of which is the region's is a square or a rectangle (a few stray pixels
#   outside it aside). A disc that small leaves its box's corners out (7 px: 0.76 of it), an
#   octagon its cut corners (0.84), a triangle or a diamond half of it; no other outline fills
#   it, and the box of a disc's fuller rows and columns leaves half as many pixels outside;
# - rows (or columns) that widen steadily from a tip to a full base are a triangle's: each row
#   within `ROW_FIT` pixels of the line fitted to their widths, the tip at most `TIP` of the
#   base. A disc, a diamond or a pentagon widens and narrows again; a house's
#   roof on its walls stops widening half way.
FULL_BOX = 0.95  # the share of its box's pixels a filled box has (a stray pixel's leeway)
SMALL_SIDE = 4  # fewer pixels across than this is a dot, whatever it fills
TIP, ROW_FIT, RIM, RIM_SHARE = 0.45, 1.5, 2, 0.25
STRAY = 0.1


def small_shape(mask: np.ndarray) -> str | None:
    """The name square, rectangle or triangle for a region a few of the image's own pixels across
    (`mask`, in those pixels), at least `SMALL_SIDE` across, where its pixels say so plainly;
    else None. A filled box's sides within a pixel of each other are a square's; a
    rectangle's differ by `_LONG` and two pixels or more (between: no name)."""
    rows, columns = np.nonzero(mask)
    if not len(rows):
        return None
    crop = mask[rows.min() : rows.max() + 1, columns.min() : columns.max() + 1]
    if min(crop.shape) < SMALL_SIDE:
        return None
    box = _filled_box(crop)
    if box is not None:
        height, width = box
        if abs(width - height) <= 1:
            return "square"
        long = max(width, height) >= _LONG * min(width, height) and abs(width - height) >= 2
        return "rectangle" if long else None
    ways = (crop, crop[::-1], crop.T, crop.T[::-1])  # tip up, down, left, right
    return "triangle" if any(_widens_to_a_base(way) for way in ways) else None


# An outline read between pixels (`coverage.outline_spread`: the contour where the region covers
# half of each pixel) has no staircase: a disc no mask-traced outline names (a 10-14 px disc in
# a small icon; a 41 px disc reduced from a padded picture, its edge blended at an odd step) is
# named from it. Round where its spread stays under `SUBPIXEL_ROUND`, from `SUBPIXEL_SIDE` px
# across: below that, an octagon's corners blur away about as far (measured on 40 discs and
# octagons each, drawn four times the size at random places and turns and reduced: at 7 px a
# disc spreads 0.0125-0.0188 and an octagon 0.0127-0.0283; at 8 px 0.0103-0.0147 and
# 0.0162-0.0249, a 9 px disc up to 0.0150; at 10 px 0.0096-0.0132 and 0.0177-0.0231; at 24 px
# 0.0066-0.0085 and 0.0173-0.0242), so a smaller disc gets no name: it may be an octagon. Only
# round outlines are named so: a cornered one is named from its traced outline or not at all (a
# region that took in part of a neighbour still has corners).
SUBPIXEL_ROUND, SUBPIXEL_SIDE = 0.015, 10.0


def between_pixels(spread: float, aspect: float, diameter: float) -> str | None:
    """ "circle" or "oval" from a region's outline read between pixels (the first figures of
    `coverage.outline_spread`), or None."""
    if diameter < SUBPIXEL_SIDE or spread > SUBPIXEL_ROUND:
        return None
    return "circle" if aspect <= _EVEN else "oval" if aspect >= _LONG else None


# Long before an outline read between pixels says what a small shape is, it says that it is no
# triangle. Made round by its ellipse of inertia (`coverage.outline_spread`), every triangle is
# the same equilateral one, whose radius spreads about 0.19 over its mean; a compact region (its
# ellipse's aspect at most `NOT_TRIANGLE_ASPECT`, a sliver of a triangle a pixel wide is long)
# spreading under `NOT_TRIANGLE_SPREAD` is something rounder. Measured 2026-12-07 on shapes drawn
# four times the size at random places and turns and reduced, 5-14 px across, 40 per size and
# kind, as PNG and as JPEG 90: compact triangles (apex up, turned, random corners) 0.125-0.46,
# none under 0.1; discs 0.005-0.024 (JPEG up to 0.093), octagons 0.012-0.032, hexagons
# 0.018-0.041 (a pentagon 0.03-0.06, on either side), a tilted square from 0.055. A 7 px disc,
# which may as well be an octagon and gets no name, is thus still not "the red triangular
# object" beside it.
NOT_TRIANGLE_SPREAD, NOT_TRIANGLE_ASPECT, NOT_TRIANGLE_SIDE = 0.05, 1.3, 5.0
# the describer's attribute for such a region (templates: no triangle answers to it)
NOT_TRIANGULAR = "not-triangular"


def not_a_triangle(spread: float, aspect: float, diameter: float) -> bool:
    """Whether a region's outline read between pixels (`coverage.outline_spread`'s figures)
    rules out a triangle, though it names no shape."""
    return (
        diameter >= NOT_TRIANGLE_SIDE
        and aspect <= NOT_TRIANGLE_ASPECT
        and spread < NOT_TRIANGLE_SPREAD
    )


def _filled_box(crop: np.ndarray) -> tuple[int, int] | None:
    """The height and width of the box that the crop's rows and columns at least half full
    bound, where the region fills it (`FULL_BOX`) and its pixels outside it (strays a reading
    took from a neighbour's blurred edge) are at most `STRAY` of those inside; else None."""
    full_rows = np.flatnonzero(crop.mean(axis=1) >= 0.5)
    full_columns = np.flatnonzero(crop.mean(axis=0) >= 0.5)
    if not len(full_rows) or not len(full_columns):
        return None
    top, bottom = full_rows[0], full_rows[-1] + 1
    left, right = full_columns[0], full_columns[-1] + 1
    inside = int(crop[top:bottom, left:right].sum())
    height, width = bottom - top, right - left
    if min(height, width) < SMALL_SIDE or inside < FULL_BOX * height * width:
        return None
    return (height, width) if int(crop.sum()) - inside <= STRAY * inside else None


def _widens_to_a_base(crop: np.ndarray) -> bool:
    """Whether the crop's rows widen steadily from a tip (its first row) to a full base: past
    the widest row at most `RIM` narrower ones and a quarter of the rows (`RIM_SHARE`: the
    blurred edge a reading may take in; a disc narrows again for half its rows), and
    every row within `ROW_FIT` of the line fitted to the rows' widths (the tip's row may fall
    short of it: a sharp tip is a pixel or two)."""
    widths = crop.sum(axis=1).astype(float)
    widest = len(widths) - 1 - int(np.argmax(widths[::-1]))  # the last of the widest rows
    if len(widths) - 1 - widest > min(RIM, RIM_SHARE * len(widths)):  # a disc's lower half
        return False
    widths = widths[: widest + 1]
    base = float(crop.shape[1])
    if len(widths) < SMALL_SIDE or widths[-1] < base - 1 or np.any(np.diff(widths) < 0):
        return False
    rows = np.arange(len(widths))
    slope, tip = np.polyfit(rows, widths, 1)
    off = widths - (slope * rows + tip)
    off[0] = max(float(off[0]), 0.0)
    return bool(tip <= TIP * base and np.abs(off).max() <= ROW_FIT)


def _outline(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The longest outline of `mask` as (row, column) points, centred on the mask's centroid
    and mapped so that the mask's ellipse of inertia is a unit circle (`_whitened`), traced
    after enlarging a small region so that a one-pixel step is small against it."""
    scale = max(1, math.ceil(_TRACE / max(1.0, 2 * math.sqrt(mask.sum() / math.pi))))
    if scale > 1:
        mask = np.kron(mask, np.ones((scale, scale), bool))
        # smooth the staircase that enlarging leaves, then cut back to a mask
        mask = ndimage.uniform_filter(mask.astype(np.float32), size=scale) >= 0.5
    contours = find_contours(np.pad(mask, 2).astype(np.float32), 0.5)
    if not contours:
        return None
    longest = max(contours, key=len)
    if len(longest) < 12:
        return None
    pixels = np.argwhere(mask).astype(np.float64) + 2  # the padding's offset
    return longest - pixels.mean(axis=0), np.cov(pixels.T)


def _whitened_radii(outline: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Distances of the outline's points from the centroid, in the frame where the region's
    ellipse of inertia is a circle: constant for an ellipse, with n bumps for an n-gon."""
    points, covariance = outline
    values, vectors = np.linalg.eigh(covariance)
    whitened = points @ vectors / np.sqrt(np.maximum(values, 1e-9))
    return np.hypot(whitened[:, 0], whitened[:, 1])


def _spread(outline: tuple[np.ndarray, np.ndarray]) -> float:
    """How far the outline is from its ellipse: the radius's spread over its mean."""
    radii = _whitened_radii(outline)
    return float(radii.std() / max(1e-9, radii.mean()))


def _aspect(outline: tuple[np.ndarray, np.ndarray]) -> float:
    values = np.linalg.eigvalsh(outline[1])
    return float(math.sqrt(max(values) / max(1e-9, min(values))))


def _corners(outline: np.ndarray) -> np.ndarray:
    """The outline as a closed polygon of its corners: Douglas-Peucker at a tolerance of 4% of
    the shape's size, then the corners that are hardly corners (a turn under 25 degrees, as the
    start of the trace leaves one) taken out, and two corners closer than 15% of the shape's narrower side (a
    blunt corner cut twice) made the one where their sides meet."""
    # imported here: its module loads scipy.signal and scipy.stats (half a second), which a
    # command that names no shape (a resumed build, a review) does without
    from skimage.measure import approximate_polygon

    extent = float(np.ptp(outline, axis=0).max())
    narrow = float(np.ptp(outline, axis=0).min())  # a bar's short side has two real corners
    polygon = approximate_polygon(outline, tolerance=0.04 * extent)[:-1]
    changed = True
    while changed and len(polygon) > 3:
        changed = False
        for i in range(len(polygon)):
            before, here, after = polygon[i - 1], polygon[i], polygon[(i + 1) % len(polygon)]
            if _turn(before, here, after) < math.radians(25):
                polygon = np.delete(polygon, i, axis=0)
            elif np.linalg.norm(after - here) < 0.15 * narrow:  # one blunt corner, cut twice
                polygon[i] = _meet(before, here, after, polygon[(i + 2) % len(polygon)])
                polygon = np.delete(polygon, (i + 1) % len(polygon), axis=0)
            else:
                continue
            changed = True
            break
    return polygon


def _meet(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Where the line through a and b meets the line through c and d (the corner that a
    rounded corner's two cuts b, c stand for); their midpoint where the lines are parallel."""
    r, s = b - a, d - c
    denominator = r[0] * s[1] - r[1] * s[0]
    if abs(denominator) < 1e-9:
        return (b + c) / 2
    t = ((c[0] - a[0]) * s[1] - (c[1] - a[1]) * s[0]) / denominator
    return a + t * r


def _turn(before: np.ndarray, here: np.ndarray, after: np.ndarray) -> float:
    """How far the outline turns at `here`, in radians (0: straight on)."""
    a, b = here - before, after - here
    cosine = float(np.dot(a, b) / max(1e-9, np.linalg.norm(a) * np.linalg.norm(b)))
    return math.acos(max(-1.0, min(1.0, cosine)))


def _fitted(outline: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """A triangle's or a quadrilateral's corners where the lines fitted to its sides meet: the
    outline's points along the middle three fifths of each side (clear of the corners, which a
    blur or a reduction blunts), fitted by their principal axis. A blunted tip's corner cut
    short leaves the corners' polygon a few percent smaller than the shape; the sides' lines
    still meet where the drawn corner was."""
    lines = []
    for i in range(len(corners)):
        a, b = corners[i], corners[(i + 1) % len(corners)]
        side = b - a
        length = float(np.linalg.norm(side))
        t = (outline - a) @ side / max(1e-9, length**2)
        off = np.abs((outline - a) @ np.array([-side[1], side[0]])) / max(1e-9, length)
        near = outline[(t > 0.2) & (t < 0.8) & (off < 0.1 * length)]
        if len(near) < 3:
            return corners
        centre = near.mean(axis=0)
        direction = np.linalg.svd(near - centre)[2][0]
        lines.append((centre, centre + direction))
    return np.array([_meet(*lines[i - 1], *lines[i]) for i in range(len(lines))], dtype=np.float64)


def _polygon(outline: np.ndarray) -> str | None:
    corners = _corners(outline)
    n = len(corners)
    if n in (3, 4) and abs(_area(corners) / _area(outline) - 1) > FIT:
        corners = _fitted(outline, corners)  # a blunted corner (never a circle: 5+ corners)
    if n < 3 or abs(_area(corners) / _area(outline) - 1) > FIT:
        return None  # corners that do not make the shape (a round outline cut into chords)
    edges = np.roll(corners, -1, axis=0) - corners
    crosses = (
        edges[:, 0] * np.roll(edges, -1, axis=0)[:, 1]
        - edges[:, 1] * np.roll(edges, -1, axis=0)[:, 0]
    )
    turning = np.sign(crosses.sum())
    inward = int(np.sum(np.sign(crosses) == -turning))  # corners that turn against the rest
    lengths = np.linalg.norm(edges, axis=1)
    even = lengths.max() <= 1.3 * lengths.min()  # a regular polygon's sides
    if inward == 0:
        if n == 3:
            return "triangle"
        if n == 4:
            return _quadrilateral(edges, lengths)
        named = {5: "pentagon", 6: "hexagon", 8: "octagon"}
        return named.get(n) if even else None
    if inward == 5 and n == 10:
        return "star"
    if inward == 4 and n == 12 and _axis_aligned(edges):
        return "cross"
    return None


def _area(points: np.ndarray) -> float:
    """The area inside a closed outline (shoelace formula)."""
    x, y = points[:, 1], points[:, 0]
    return abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))) / 2 or 1e-9


def _axis_aligned(edges: np.ndarray, slack: float = math.radians(8)) -> bool:
    angles = np.arctan2(edges[:, 0], edges[:, 1]) % (math.pi / 2)
    return bool(np.all((angles < slack) | (angles > math.pi / 2 - slack)))


def _quadrilateral(edges: np.ndarray, lengths: np.ndarray) -> str | None:
    """Four corners: a square or a rectangle when its sides run along the axes and meet at
    right angles, a diamond when a square stands on a corner; anything else is not named."""
    right = all(
        abs(float(np.dot(edges[i], edges[(i + 1) % 4]))) <= 0.12 * lengths[i] * lengths[(i + 1) % 4]
        for i in range(4)
    )
    if not right:
        return None
    ratio = float(max(lengths) / max(1e-9, min(lengths)))
    if _axis_aligned(edges):
        return "square" if ratio <= _EVEN else "rectangle" if ratio >= _LONG else None
    diagonal = _axis_aligned(np.stack([edges[:, 0] + edges[:, 1], edges[:, 1] - edges[:, 0]], 1))
    return "diamond" if diagonal and ratio <= _EVEN else None
