"""What the boxes, mask areas and shape hints of an image's objects say about how they meet:
apart, touching, overlapping, or one inside another. Only what the facts show plainly is
named; a pair in between is `unclear`, and no question rests on it.

A segmenter sees the visible part of each object, so an object partly covered shows a bitten
region, and the blurred edges of two touching objects can join one region to a ring around the
other. Hence the margins below: a touch is two boxes that meet along one axis (within `TOUCH`
pixels) and share a stretch of the other where both shapes reach; an overlap is two boxes that cross deeply on
both axes, each sticking out of the other; an inner object sits well inside both the outer's
box and its shape; and objects are apart only when their boxes are `APART` pixels apart.

The pixels are those of the image shown with its longer side `ANALYSIS_SIDE` long (`framed`):
every margin here, in `agreement` and in the templates is a share of the image, so a 96 px
icon and a 6,000 px scan of one drawing meet the same tests."""

from __future__ import annotations

from benchfoundry.core.records import Instance
from benchfoundry.extractors.agreement import too_small_to_name
from benchfoundry.extractors.frame import Framed, framed, image_area, image_box
from benchfoundry.extractors.shapes import NOT_TRIANGULAR

__all__ = ["Framed", "framed", "image_area", "image_box"]  # kept here for the templates

APART = 8  # boxes at least this far apart on some axis: the objects do not meet
NEAR = 5  # boxes closer than this may have changed each other (a touch, with a margin)
TOUCH = 3  # boxes this close on one axis (a gap or an overlap of a few pixels) meet there
SHARED = 8  # the stretch two touching boxes must share on the other axis
CROSS = 6  # boxes crossing this deep on both axes overlap
STICK_OUT = 6  # an overlapping box sticks this far out of the other on some side
INSIDE = 4  # an inner box lies this far inside the outer's edges
FILLED = 0.5  # a bitten region still fills this share of its box (a ring around another does not)
SHAPE_HINTS = ("round", "rectangular", "triangular")


def gaps(a: Instance, b: Instance) -> tuple[float, float]:
    """The gaps between two boxes along x and y; a negative gap is how far they cross."""
    (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = a.box, b.box
    return max(ax0, bx0) - min(ax1, bx1), max(ay0, by0) - min(ay1, by1)


def hint(instance: Instance) -> str | None:
    """The describer's shape hint (round, rectangular, triangular), if it gave one."""
    return next((a for a in instance.attributes[1:-2] if a in SHAPE_HINTS), None)


def ruled_out(instance: Instance) -> frozenset[str]:
    """The shape hints the describer's outline read between pixels rules out for an object it
    could not name (`shapes.NOT_TRIANGULAR`: a 7 px disc is no triangle)."""
    return frozenset({"triangular"} if NOT_TRIANGULAR in instance.attributes else ())


def fill(instance: Instance) -> float:
    """The share of its box that the object's mask covers."""
    x0, y0, x1, y1 = instance.box
    return instance.mask_area / max(1.0, (x1 - x0) * (y1 - y0))


def apart(a: Instance, b: Instance) -> bool:
    return max(gaps(a, b)) >= APART


def _in_shape(outer: Instance, x: float, y: float) -> bool:
    """Whether a point lies inside the outer object's shape, taken from its hint and box."""
    x0, y0, x1, y1 = outer.box
    u, v = (x - x0) / max(1.0, x1 - x0), (y - y0) / max(1.0, y1 - y0)
    shape = hint(outer)
    if shape == "rectangular":
        return 0 <= u <= 1 and 0 <= v <= 1
    if shape == "round":
        return (u - 0.5) ** 2 + (v - 0.5) ** 2 <= 0.25
    if shape == "triangular":  # apex up, as the describer's fill test reads a triangle
        return 0 <= v <= 1 and abs(u - 0.5) <= v / 2
    return False


def inside(inner: Instance, outer: Instance) -> bool:
    """The inner box lies well inside the outer's box, and its corners inside the outer's shape.
    The inner object has a shape hint, or is a dot too few pixels across to name a shape
    (`agreement.too_small_to_name`: a 5 px square in a 96 px icon), which is no blurred edge."""
    (ix0, iy0, ix1, iy1), (ox0, oy0, ox1, oy1) = inner.box, outer.box
    if min(ix0 - ox0, iy0 - oy0, ox1 - ix1, oy1 - iy1) < INSIDE:
        return False
    corners = [(ix0, iy0), (ix1, iy0), (ix0, iy1), (ix1, iy1)]
    named = hint(inner) is not None or too_small_to_name(inner)
    return named and all(_in_shape(outer, x, y) for x, y in corners)


def _reach(instance: Instance, side: str) -> tuple[float, float]:
    """Where along a side of its box the object's shape reaches that side: all of it for a
    rectangle, the middle for a round object, the base's corner or the apex for a triangle."""
    x0, y0, x1, y1 = instance.box
    along = (x0, x1) if side in ("top", "bottom") else (y0, y1)
    middle = (along[0] + along[1]) / 2
    shape = hint(instance)
    if shape == "rectangular" or (shape == "triangular" and side == "bottom"):
        return along
    if shape == "triangular" and side in ("left", "right"):
        return (y1, y1)
    return (middle, middle)


def _touching(a: Instance, b: Instance, gx: float, gy: float) -> bool:
    """Two boxes that meet on one axis, where both shapes reach the sides that face."""
    if not (-TOUCH <= max(gx, gy) <= TOUCH and min(gx, gy) <= -SHARED):
        return False
    if gx > gy:  # side by side
        left, right = (a, b) if a.box[0] < b.box[0] else (b, a)
        one, two = _reach(left, "right"), _reach(right, "left")
    else:
        upper, lower = (a, b) if a.box[1] < b.box[1] else (b, a)
        one, two = _reach(upper, "bottom"), _reach(lower, "top")
    return max(one[0], two[0]) <= min(one[1], two[1]) + TOUCH


def _sticks_out(a: Instance, b: Instance) -> bool:
    """Box `a` reaches at least STICK_OUT beyond box `b` on some side."""
    (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = a.box, b.box
    return max(bx0 - ax0, by0 - ay0, ax1 - bx1, ay1 - by1) >= STICK_OUT


def _edges_apart(a: Instance, b: Instance) -> bool:
    """No side of one box runs along the same side of the other: a region that has grown a
    ring around its neighbour (their blurred edges joined) ends where the neighbour ends."""
    return all(abs(p - q) > TOUCH for p, q in zip(a.box, b.box, strict=True))


def relation(a: Instance, b: Instance) -> str:
    """`apart`, `touches`, `overlaps`, `contains` (a holds b), `inside` (b holds a) or
    `unclear`. Naming a contact needs a shape hint on both objects (a region without one may
    be a blurred edge joined to its neighbour, not an object's outline), except an overlap,
    where the lower object is bitten: one hint, and the other region filling half its box."""
    if apart(a, b):
        return "apart"
    gx, gy = gaps(a, b)
    crossing = (
        max(gx, gy) <= -CROSS
        and _sticks_out(a, b)
        and _sticks_out(b, a)
        and _edges_apart(a, b)
        and min(fill(a), fill(b)) >= FILLED
    )
    if hint(a) is not None and inside(b, a):
        return "contains"
    if hint(b) is not None and inside(a, b):
        return "inside"
    if hint(a) is None or hint(b) is None:
        return "overlaps" if crossing and (hint(a) or hint(b)) else "unclear"
    if _touching(a, b, gx, gy):
        return "touches"
    return "overlaps" if crossing else "unclear"


def in_contact(instance: Instance, objects: list[Instance]) -> bool:
    """Whether another object comes within NEAR of it: its region, box or shape hint may be
    changed by the other (covered, nested, or joined at a blurred edge)."""
    return any(o is not instance and max(gaps(o, instance)) < NEAR for o in objects)


def extent(instance: Instance, objects: list[Instance]) -> tuple[float, float, float, float]:
    """Where the object could lie: its box, grown over the boxes of objects near it (a covered
    part of it lies under the other)."""
    boxes = [instance.box] + [
        o.box for o in objects if o is not instance and not apart(o, instance)
    ]
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )
