"""The instance describer (GRiT's role, without a neural model by default): for each region a
box, a position phrase, a size word and share, the dominant colour's name (`colour_names`: a
basic name where people agree on it, else the two nearest joined, "blue-green"), the shape's name
and hint (`shapes`) and whether it is one flat colour; with a captioner configured, also a label and a one-sentence
dense caption of the crop.

`FLAT` marks a region whose inside is one colour (a drawn shape, a sign, a flat graphic). Such a
region is plainly one thing; a region of a photograph (texture, shading, a part of a scene) is
not, and without a label from a recogniser a template may not count, name or locate it."""

from __future__ import annotations

import numpy as np
from PIL import Image
from scipy import ndimage

from benchfoundry.core.records import Instance
from benchfoundry.extractors.base import Captioner, Region, analysis_copy
from benchfoundry.extractors.blends import BLEND, overlaps
from benchfoundry.extractors.colour_names import colour_name
from benchfoundry.extractors.coverage import EDGE, coverage, covered, outline_spread
from benchfoundry.extractors.shapes import (
    HINT_OF,
    NOT_TRIANGULAR,
    SHAPE_NAMES,
    between_pixels,
    not_a_triangle,
    shape_name,
    small_shape,
)


def position_phrase(box: tuple[float, float, float, float], width: int, height: int) -> str:
    """Where the box's centre falls in a 3 x 3 grid: "top left" ... "center" ... "bottom right"."""
    cx, cy = (box[0] + box[2]) / 2 / width, (box[1] + box[3]) / 2 / height
    row = "top" if cy < 1 / 3 else "bottom" if cy > 2 / 3 else "middle"
    column = "left" if cx < 1 / 3 else "right" if cx > 2 / 3 else "center"
    if row == "middle":
        return "center" if column == "center" else f"middle {column}"
    return f"{row} {column}" if column != "center" else f"{row} center"


FLAT = "flat-coloured"
DESCRIBER = "12"  # the describer's version: part of the extractor configuration's hash


def core(mask: np.ndarray, edge: float = 1.0) -> np.ndarray:
    """The region's pixels clear of its edge's blend: deeper inside than `edge` pixels, or, in
    a region too thin for that, than 0.6 of its deepest pixel's depth. A small shape's edge,
    where its colour fades into the paper's, is most of its pixels once an image is reduced
    and enlarged again (a 7 px red dot reads pink through its whole mask)."""
    if not mask.any():
        return mask
    depth = ndimage.distance_transform_edt(np.pad(mask, 1))[1:-1, 1:-1]
    return depth > min(edge, 0.6 * depth.max())


def flat_colour(
    pixels: np.ndarray, mask: np.ndarray, distance: float = 30.0, edge: int = 3
) -> bool:
    """Whether the region's inside (its mask eroded by `edge` pixels, so a blended or
    anti-aliased edge, and the ringing JPEG's chroma subsampling leaves beside it, do not count;
    its `core` where that leaves too few) is one colour: 90% of its pixels within `distance` of
    their median."""
    if mask.shape != pixels.shape[:2] or not mask.any():
        return False
    inside = ndimage.binary_erosion(mask, iterations=edge)
    # a region too small to keep 16 pixels so eroded (a 7 px shape enlarged) is read by its core
    values = pixels[inside if inside.sum() >= 16 else core(mask, edge)].astype(np.float32)
    spread = np.linalg.norm(values - np.median(values, axis=0), axis=1)
    return bool(np.mean(spread <= distance) >= 0.9)


def recognised(instance: Instance) -> bool:
    """Whether an instance is plainly one thing: labelled by a recogniser (a detector, a
    captioner of its crop, SAM with a labeller) or one flat colour."""
    return bool(instance.label) or FLAT in instance.attributes


def size_word(share: float) -> str:
    return "large" if share >= 0.04 else "medium" if share >= 0.012 else "small"


def outline_mask(pixels: np.ndarray, mask: np.ndarray, reach: int = 3) -> np.ndarray:
    """The region's shape as its pixels draw it: near the segmenter's mask (within `reach`
    pixels), the pixels closer in colour to the region's inside than to its surroundings. A
    segmenter's own mask follows its clean-up (a blended edge given to one side, corners cut),
    which can turn a circle's outline into an octagon's."""
    if mask.shape != pixels.shape[:2]:
        return mask
    rows, columns = np.nonzero(mask)
    pad = 3 * reach
    top, left = max(0, rows.min() - pad), max(0, columns.min() - pad)
    bottom, right = rows.max() + pad + 1, columns.max() + pad + 1
    own, local = mask[top:bottom, left:right], pixels[top:bottom, left:right].astype(np.float32)
    inside = ndimage.binary_erosion(own, iterations=max(2, reach - 1))  # clear of the edge's blur
    near = ndimage.binary_dilation(own, iterations=reach)
    around = ndimage.binary_dilation(own, iterations=2 * reach) & ~near
    if inside.sum() < 16 or not around.any():
        return mask
    to_inside = np.linalg.norm(local - np.median(local[inside], axis=0), axis=-1)
    to_around = np.linalg.norm(local - np.median(local[around], axis=0), axis=-1)
    drawn = (near & (to_inside < to_around)) | inside
    labels, _ = ndimage.label(drawn)
    keep = np.bincount(labels[inside]).argmax()  # the piece that holds the inside
    out = np.zeros(mask.shape, bool)
    out[top:bottom, left:right] = labels == keep
    return out


NAMING_SIDE = 256  # a region is named from a copy this many pixels across at most


def _named(pixels: np.ndarray, mask: np.ndarray, reach: int = 3) -> str | None:
    """The shape's name, read from the region's surroundings cut out and (for a large region)
    taken every k-th pixel, so that a 12-megapixel photograph's regions cost what a drawing's do."""
    if mask.shape != pixels.shape[:2]:
        return shape_name(mask)
    rows, columns = np.nonzero(mask)
    step = max(1, -(-max(int(np.ptp(rows)), int(np.ptp(columns))) // NAMING_SIDE))
    pad = 12 * step
    top, left = max(0, rows.min() - pad), max(0, columns.min() - pad)
    bottom, right = rows.max() + pad + 1, columns.max() + pad + 1
    cut = (slice(top, bottom, step), slice(left, right, step))
    return shape_name(outline_mask(pixels[cut], mask[cut], max(3, round(reach / step))))


def shape_hints(region: Region, pixels: np.ndarray, reach: int = 3) -> list[str]:
    """The shape's name (circle, hexagon, star... from its outline, `shapes.shape_name`) after
    its hint (round, rectangular, triangular: the adjective a template may use), and elongated
    for a long box; a region whose outline names no shape gets no hint, so that a template never
    calls a hexagon or two joined circles "round"."""
    x0, y0, x1, y1 = region.box
    w, h = max(1.0, x1 - x0), max(1.0, y1 - y0)
    hints = ["elongated"] if max(w, h) / min(w, h) > 2.5 else []
    name = _named(pixels, region.mask, reach) if region.mask.any() else None
    if name is None:
        return hints
    return [*hints, *([HINT_OF[name]] if name in HINT_OF else []), name]


FINE = 1 / 12  # a region whose box is narrower than this share of the image's longer side


def _fine(looked: Region, hints: list[str]) -> bool:
    """Whether a region the analysis copy names no shape is small enough that the copy's
    coarseness, not its outline, may be why."""
    x0, y0, x1, y1 = looked.box
    small = max(x1 - x0, y1 - y0) < FINE * max(looked.mask.shape)
    return small and not _named_any(hints)


def dominant_colour(
    pixels: np.ndarray, mask: np.ndarray, edge: float = 0.0
) -> tuple[float, float, float]:
    """The median colour of the region's `core` (of its whole mask where `edge` is 0)."""
    if mask.shape != pixels.shape[:2] or not mask.any():
        inside = pixels.reshape(-1, 3)
    else:
        inside = pixels[core(mask, edge) if edge else mask]
    return tuple(float(v) for v in np.median(inside, axis=0))  # type: ignore[return-value]


SAME_SIZE = 0.85  # areas within this ratio of each other are one size (`in_order`): a
# circle is 0.79 of its square, and noise moves an area by a few percent
# Objects of one size are ordered along a slanted line, so that objects in one row or in one
# column never tie: x plus this share of y (an irrational share: no grid lines it up).
SLANT = 0.618


def in_order(instances: list[Instance]) -> list[Instance]:
    """The instances largest first, as a person would rank them: areas within `SAME_SIZE` of the
    largest not yet ranked are one size, ordered among themselves by where they lie (left to
    right, along a slant). A template asks about the first objects it finds, so this order must
    not depend on a pixel's noise: two equal squares swap under JPEG, a resize or a margin when
    ranked by their areas alone, and the questions asked would change with them."""
    rest = sorted(instances, key=lambda i: -i.mask_area)
    out: list[Instance] = []
    while rest:
        size = [i for i in rest if i.mask_area >= SAME_SIZE * rest[0].mask_area]
        rest = [i for i in rest if i.mask_area < SAME_SIZE * rest[0].mask_area]
        out += sorted(size, key=lambda i: (i.box[0] + i.box[2]) + SLANT * (i.box[1] + i.box[3]))
    return out


def describe(
    image: Image.Image, regions: list[Region], captioner: Captioner | None = None
) -> list[Instance]:
    """Instances for the regions, largest first (`in_order`: one size ordered by place)."""
    rgb = image.convert("RGB")
    seen, factor = analysis_copy(rgb)  # colours, shapes and flatness read at one size
    edge = max(1.0, factor)  # an enlarged image's blurred edges are that much wider
    pixels = np.asarray(seen)
    total = rgb.width * rgb.height
    instances = []
    looked = [_at(region, factor, seen.size) for region in regions]
    medians = [np.asarray(dominant_colour(pixels, r.mask, 2 * edge)) for r in looked]
    blends = overlaps(pixels, [r.mask for r in looked], medians)
    # An image's own pixels may hold more of an outline than its analysis copy. Reduced: a shape
    # 29 px across in a picture padded by a margin is 24 px across once reduced, where its
    # outline's staircase hides whether it is round; a small shape (`FINE`) the copy names
    # nothing is named from the image's own pixels (`_named` takes every k-th pixel of a large
    # one). Enlarged: the copy carries the image's staircase, a pixel of it as wide as the
    # enlargement, which the outline's test for a circle does not allow for (a 14 px circle in
    # a 64 px icon, six times enlarged, is no circle in the copy); a shape the copy names
    # nothing is named from the image's own pixels, where the staircase is measured as it is.
    # Either way only as one of the plain shapes (`HINT_OF`): an enlarged picture's blocky
    # circle could pass for an octagon at its own size, never for a triangle or a square.
    own = np.asarray(rgb) if factor != 1 else None
    for k, region in enumerate(regions):
        native = region.mask.shape == (rgb.height, rgb.width)  # the mask in the image's pixels
        flat = flat_colour(pixels, looked[k].mask, edge=round(3 * edge))
        # a flat region is read between pixels where the most pixels draw it: the image's own
        # for a small image, the analysis copy for a large one (reduced by averaging, which
        # keeps each pixel's coverage)
        small = factor > 1 and native
        scale = 1.0 if small else factor
        found = None
        if flat:
            found = coverage(own, region.mask) if small else coverage(pixels, looked[k].mask)
        measured = _measured(found, scale, region) if found is not None else None
        area, box = measured or (float(region.area), region.box)
        share = area / total
        hints = shape_hints(looked[k], pixels, round(3 * edge))
        if own is not None and native and _unnamed(looked[k], hints, factor):
            again = shape_hints(region, own, max(1, round(3 / factor)))
            hints = again if again and again[-1] in HINT_OF else hints
        if factor >= 1 and native and _unnamed(looked[k], hints, factor):
            # too few of the image's own pixels to trace (a 7 px square in a 96 px icon, whose
            # enlarged copy rounds its corners): a box it fills is still a box, and rows that
            # widen steadily to a base still a triangle (`shapes.small_shape`)
            hints = [*hints, *_small_hints(region.mask)]
        if found is not None and not _named_any(hints):  # its outline read between pixels
            hints = [*hints, *_between_hints(found[0], measured is not None)]
        attributes = [
            colour_name(tuple(medians[k])),  # type: ignore[arg-type]
            *hints,
            *([FLAT] if flat else []),
            *([BLEND] if k in blends else []),  # two translucent shapes' overlap
            size_word(share),
            position_phrase(box, rgb.width, rgb.height),
        ]
        label = dense = None
        if captioner is not None:
            crop = rgb.crop(tuple(int(round(v)) for v in box))
            captions = captioner.caption(crop)
            if captions:
                dense = captions[0].text
                label = _label_from(dense)
        instances.append(
            Instance(
                box=[float(v) for v in box],
                mask_area=round(area),
                label=label,
                attributes=attributes,
                dense_caption=dense,
                score=float(region.score),
            )
        )
    return in_order(instances)


def _measured(
    found: tuple[np.ndarray, tuple[slice, slice]], scale: float, region: Region
) -> tuple[float, tuple[float, ...]] | None:
    """A flat region's area and box in the image's pixels from its coverage map
    (`coverage.covered`), read in pixels `scale` times the image's; None where no outline
    crosses, or where a side lies further from the segmenter's box than the edge's blend (the
    mask took in part of a neighbour of a near colour, which JPEG blends into it): the reading
    only refines the segmenter's measures."""
    read = covered(found)
    if read is None:
        return None
    area, box = read[0] / scale**2, tuple(v / scale for v in read[1])
    if max(abs(a - b) for a, b in zip(box, region.box, strict=True)) > (EDGE + 1) / scale:
        return None
    return area, box


def _named_any(hints: list[str]) -> bool:
    return any(h in SHAPE_NAMES for h in hints)


def _unnamed(looked: Region, hints: list[str], factor: float) -> bool:
    """Whether the copy's name for a region may be missing for want of the image's own pixels:
    a small region (`_fine`), or any region of an enlarged image, that it names nothing."""
    return _fine(looked, hints) or (factor > 1 and not _named_any(hints))


def _small_hints(mask: np.ndarray) -> list[str]:
    """The hint and the name of a region too small to trace (`shapes.small_shape`)."""
    name = small_shape(mask)
    return [HINT_OF[name], name] if name else []


def _between_hints(share: np.ndarray, measured: bool) -> list[str]:
    """The hint and the name of a flat region's shape from its outline read between pixels
    (`shapes.between_pixels`), on its coverage map; for a region it names nothing and whose map
    measured it (`measured`: it took in no part of a neighbour), `NOT_TRIANGULAR` where the
    outline rules a triangle out (`shapes.not_a_triangle`)."""
    figures = outline_spread(share)
    name = between_pixels(*figures)
    if name:
        return [HINT_OF[name], name]
    return [NOT_TRIANGULAR] if measured and not_a_triangle(*figures) else []


def _at(region: Region, factor: float, size: tuple[int, int]) -> Region:
    """The region in the analysis copy's pixels (its mask resized, its box scaled)."""
    if factor == 1 or region.mask.ndim != 2:
        return region
    # smoothed, not blocky: an enlarged mask's staircase would hide a circle's outline
    method = Image.Resampling.BILINEAR if factor > 1 else Image.Resampling.BOX
    mask = Image.fromarray(region.mask.astype(np.uint8) * 255).resize(size, method)
    box = tuple(v * factor for v in region.box)
    return Region(box, int(region.area * factor**2), region.score, np.asarray(mask) >= 128)  # type: ignore[arg-type]


def _label_from(caption: str) -> str:
    """A short label from a caption: its first noun phrase, roughly (the words after an article)."""
    words = caption.strip().rstrip(".").split()
    for i, word in enumerate(words):
        if word.lower() in ("a", "an", "the") and i + 1 < len(words):
            return " ".join(words[i + 1 : i + 3])
    return " ".join(words[:2])
