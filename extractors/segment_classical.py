"""The offline default segmenter: graph-based segmentation (Felzenszwalb, scikit-image), then
the artefacts of its edges cleaned away, so that each flat shape comes out as one region. Every
image is looked at with its longer side `ANALYSIS_SIDE` long (`base.analysis_copy`), so its
pixel thresholds are shares of the image whatever its size. It
emits the same regions a SAM backend does, so everything downstream is identical; it needs no
weights and no GPU.

Felzenszwalb cuts the blurred or anti-aliased edge of a flat shape into regions of their own:
strips one to three pixels wide along each side, and rings of blended colour around the shape.
Counted as objects they give a plain square nine "objects". The clean-up, in order:
- slivers: a region at most `min_width` pixels across (twice its deepest inner distance, plus
  one), or 1.2% of the image's shorter side when that is more, gives each of its pixels to the
  nearest region that is not a sliver;
- same colour: neighbouring regions whose median colours are within `merge_distance` join, each
  region's median taken over its own pixels, not the slivers it took in (a shape's rim that the
  graph cut from its inside along JPEG's noise is the shape's colour; with the blended slivers
  it absorbed it was not);
- bands: a thin region along another's border whose colour is a blend of its two neighbours'
  (an edge between them) joins the neighbour it is closest to in colour;
- background: regions of the colour of the image's frame (where the frame is one colour), and
  large regions that touch two sides of the image, are not objects; a region near that colour
  but plainly not it (`FAINT`) that stands inside the image is a faint shape (beige on white).
A region's box and area are those of its pixels of its own colour (within `merge_distance` of
its median), so the blended edge it absorbed does not widen it.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

import numpy as np
from PIL import Image
from scipy import ndimage
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from skimage.segmentation import felzenszwalb, find_boundaries

from benchfoundry.extractors.base import ANALYSIS_SIDE, Region, Segmenter, analysis_copy

CLEANUP = "slivers+own-colour+bands+frame+faint"
GROW = 2  # pixels beyond a region's mask that may still be of its colour (an edge row)
FAINT = 12.0  # a region inside the image this far from the backdrop's colour is a faint shape  # named in the model, so facts made before are redone


class ClassicalSegmenter(Segmenter):
    name = "classical"

    def __init__(self, settings: dict[str, Any]) -> None:
        super().__init__(settings)
        self.scale = float(settings.get("scale", 300))
        self.sigma = float(settings.get("sigma", 0.8))
        # a region this share of the image or more is an object (8 x 8 pixels of a 384 x 288
        # copy): the bench draws objects from 17 px across, 14 px once padded with a margin
        self.min_share = float(settings.get("min_share", 0.0006))
        self.max_share = float(settings.get("max_share", 0.6))
        self.max_regions = int(settings.get("max_regions", 12))
        self.side = int(settings.get("side", ANALYSIS_SIDE))  # every image is looked at this size
        self.min_width = float(settings.get("min_width", 4.0))
        self.merge_distance = float(settings.get("merge_distance", 30.0))
        self.background_distance = float(settings.get("background_distance", 40.0))

    @property
    def model(self) -> str:
        return f"felzenszwalb(scale={self.scale:g}, sigma={self.sigma:g})+{CLEANUP}@{self.side}"

    @property
    def version(self) -> str:
        return importlib.metadata.version("scikit-image")

    def segment(self, image: Image.Image) -> list[Region]:
        rgb = image.convert("RGB")
        small, factor = analysis_copy(rgb, self.side)
        pixels = np.asarray(small)
        labels = felzenszwalb(
            pixels,
            scale=self.scale,
            sigma=self.sigma,
            min_size=max(8, int(self.min_share * labels_size(pixels))),
        )
        colours = pixels.astype(np.float32)
        # an edge's blur is a pixel or two of the image as given: enlarged, it is that much wider
        edge = max(1.0, factor)
        # The graph cuts an enlarged edge's blur into rings a few pixels wide each, not into one
        # wide band, so a sliver widens by the blur's growth, not by the factor: a shape 7 px
        # across in a 96 px icon is a core 16 px wide once enlarged, inside its rings.
        sliver = max(self.min_width + 2 * (edge - 1), 0.012 * min(labels.shape))
        # Regions join by the colour of their own pixels, not of the slivers they took in: the
        # graph may cut a shape's rim from its inside where JPEG's noise runs along the edge,
        # and the rim, the shape's own colour, would be tinted past `merge_distance` by the
        # blended slivers it absorbs (an orange square saved as JPEG 90 was two objects).
        given = _slivers(labels, sliver)
        labels = _absorb(labels, given)
        labels = _join_similar(labels, colours, self.merge_distance, ~given)
        labels = _join_bands(labels, colours, narrow=6.0 * edge)
        background = _frame_colour(colours, self.background_distance)
        return self._regions(labels, colours, background, factor, rgb.size)

    def _regions(
        self,
        labels: np.ndarray,
        colours: np.ndarray,
        background: np.ndarray | None,
        factor: float,
        size: tuple[int, int],
    ) -> list[Region]:
        total = labels.size
        height, width = labels.shape
        regions = []
        for label, box in enumerate(ndimage.find_objects(labels + 1)):
            if box is None:
                continue
            mask = np.zeros(labels.shape, bool)
            mask[box] = labels[box] == label
            area = int(mask.sum())
            share = area / total
            if share < self.min_share:
                continue
            ys, xs = box
            x0, y0, x1, y1 = xs.start, ys.start, xs.stop, ys.stop
            touches = sum(int(edge) for edge in (x0 == 0, y0 == 0, x1 == width, y1 == height))
            if share > self.max_share and touches >= 2:  # the background
                continue
            median = np.median(colours[mask], axis=0)
            near = None if background is None else float(np.linalg.norm(median - background))
            faint = not touches and near is not None and near >= FAINT and share >= 0.005
            faint = faint and area >= 0.35 * (x1 - x0) * (y1 - y0)
            if faint:  # of one flat colour, not letters with the paper between them
                spread = np.linalg.norm(colours[mask] - median, axis=-1)
                faint = bool(np.mean(spread <= self.merge_distance / 2) >= 0.9)
            if near is not None and near < self.background_distance and not faint:
                # of the background's colour (seen through a gap, or a leftover of it); a faint
                # shape standing inside the image (beige on white: a compact flat region of
                # half a percent of the image or more) is still a shape
                continue
            # The box and area of the region's own colour: the blended edge pixels it absorbed
            # (a pixel or two on each side) would widen its box into its neighbours'. A pixel is
            # the region's while it is nearer its colour than halfway to the colour around it
            # (where a person sees the edge), the pixels along its mask's edge included (the
            # graph may give an edge row to the neighbour): JPEG's and a resize's blur then
            # leave the box as drawn, where a fixed distance would shave a pixel off a side.
            top, left = max(0, ys.start - GROW), max(0, xs.start - GROW)
            near = (slice(top, ys.stop + GROW), slice(left, xs.stop + GROW))
            core = ndimage.binary_dilation(mask[near], iterations=GROW) & (
                np.linalg.norm(colours[near] - median, axis=-1)
                <= max(self.merge_distance, _halfway(mask, colours, median))
            )
            if core.sum() >= 0.6 * area:
                rows, columns = np.nonzero(core)
                x0, y0 = left + columns.min(), top + rows.min()
                x1, y1 = left + columns.max() + 1, top + rows.max() + 1
                area = int(core.sum())
            fill = area / ((x1 - x0) * (y1 - y0))
            if fill < 0.1:  # a thin outline, not an object
                continue
            scaled = tuple(float(v / factor) for v in (x0, y0, x1, y1))
            regions.append(
                Region(box=scaled, area=int(area / factor**2), score=float(fill), mask=mask)
            )
        regions = [r for r in regions if not _ring(r, regions)]
        regions.sort(key=lambda r: -r.area)
        kept = regions[: self.max_regions]
        if factor != 1:  # resize only the masks that are kept
            kept = [Region(r.box, r.area, r.score, _upsample(r.mask, size)) for r in kept]
        return kept


def _halfway(mask: np.ndarray, colours: np.ndarray, median: np.ndarray, ring: int = 3) -> float:
    """Half the distance from a region's colour to the median colour just around it (0 where
    nothing is around it)."""
    rows, columns = np.nonzero(mask)
    top, left = max(0, rows.min() - ring), max(0, columns.min() - ring)
    cut = (slice(top, rows.max() + ring + 1), slice(left, columns.max() + ring + 1))
    around = ndimage.binary_dilation(mask[cut], iterations=ring) & ~mask[cut]
    if not around.any():
        return 0.0
    return 0.5 * float(np.linalg.norm(median - np.median(colours[cut][around], axis=0)))


def _widths(labels: np.ndarray) -> np.ndarray:
    """Each region's width: twice the deepest distance of its pixels from its border, plus one
    (a strip one pixel wide has width 1, a filled square its side)."""
    padded = np.pad(labels, 1, constant_values=-1)
    border = find_boundaries(padded, mode="inner")[1:-1, 1:-1]
    depth = ndimage.distance_transform_edt(~border)
    return 2 * np.asarray(ndimage.maximum(depth, labels, np.arange(labels.max() + 1))) + 1


def _slivers(labels: np.ndarray, min_width: float) -> np.ndarray:
    """The pixels of the regions at most `min_width` wide (none where every region is)."""
    thin = (_widths(labels) <= min_width)[labels]
    return thin if not thin.all() else np.zeros(labels.shape, bool)


def _absorb(labels: np.ndarray, thin: np.ndarray) -> np.ndarray:
    """Each pixel of `thin` goes to the nearest region not thin."""
    if not thin.any():
        return labels
    _, (rows, columns) = ndimage.distance_transform_edt(thin, return_indices=True)
    return labels[rows, columns]


def _medians(labels: np.ndarray, colours: np.ndarray, own: np.ndarray | None = None) -> np.ndarray:
    """Each region's median colour; over its `own` pixels only where it has any (a region made
    of slivers alone keeps the median of all of them)."""
    index = np.arange(labels.max() + 1)
    medians = np.stack(
        [np.asarray(ndimage.median(colours[..., c], labels, index)) for c in range(3)], axis=1
    )
    if own is None or not own.any():
        return medians
    mine = np.where(own, labels, -1)
    has = np.bincount(mine[own], minlength=len(index)) > 0
    if has.any():
        ours = np.stack(
            [np.asarray(ndimage.median(colours[..., c], mine, index)) for c in range(3)], axis=1
        )
        medians[has] = ours[has]
    return medians


def _neighbours(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of touching regions (lower label first) and the length of border they share."""
    pairs = np.concatenate(
        [
            np.stack([labels[:, :-1].ravel(), labels[:, 1:].ravel()], axis=1),
            np.stack([labels[:-1, :].ravel(), labels[1:, :].ravel()], axis=1),
        ]
    )
    pairs = np.sort(pairs[pairs[:, 0] != pairs[:, 1]], axis=1)
    if not len(pairs):
        return np.empty((0, 2), int), np.empty(0, int)
    return np.unique(pairs, axis=0, return_counts=True)


def _relabel(labels: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """Labels mapped through `owner`, renumbered 0..n-1 (by counting, not sorting pixels)."""
    mapped = owner[labels]
    present = np.bincount(mapped.ravel(), minlength=int(owner.max()) + 1) > 0
    return (np.cumsum(present) - 1)[mapped]


def _join_similar(
    labels: np.ndarray, colours: np.ndarray, distance: float, own: np.ndarray | None = None
) -> np.ndarray:
    """Touching regions whose median colours are closer than `distance` become one (medians,
    so a ring of one colour with a few blended pixels joins the shape it belongs to; over each
    region's `own` pixels where given, not the slivers it took in)."""
    labels = _relabel(labels, np.arange(labels.max() + 1))
    pairs, _ = _neighbours(labels)
    if not len(pairs):
        return labels
    medians = _medians(labels, colours, own)
    close = pairs[np.linalg.norm(medians[pairs[:, 0]] - medians[pairs[:, 1]], axis=1) < distance]
    n = labels.max() + 1
    graph = coo_matrix((np.ones(len(close)), (close[:, 0], close[:, 1])), shape=(n, n))
    return _relabel(labels, connected_components(graph, directed=False)[1])


def _join_bands(
    labels: np.ndarray,
    colours: np.ndarray,
    ratio: float = 0.2,
    blend: float = 1.1,
    narrow: float = 6.0,
) -> np.ndarray:
    """A region along the border between two much wider ones (its two main neighbours), whose
    colour lies between theirs (an edge blended from both), joins the nearer of them in colour."""
    pairs, shared = _neighbours(labels)
    if not len(pairs):
        return labels
    medians, width = _medians(labels, colours), _widths(labels)
    owner = np.arange(labels.max() + 1)

    def apart(p: int, q: int) -> float:
        return float(np.linalg.norm(medians[p] - medians[q]))

    for region in owner.copy():
        rows = np.nonzero((pairs[:, 0] == region) | (pairs[:, 1] == region))[0]
        if len(rows) < 2:
            continue
        rows = rows[np.argsort(-shared[rows], kind="stable")][:2]
        first, second = (int(p if p != region else q) for p, q in pairs[rows])
        wide, other = (first, second) if width[first] >= width[second] else (second, first)
        if width[region] > max(narrow, ratio * width[other]):
            continue
        if apart(region, wide) + apart(region, other) > blend * apart(wide, other):
            continue
        owner[region] = wide if apart(region, wide) <= apart(region, other) else other
    for _ in range(4):  # a band joined to a band joins where that one went
        owner = owner[owner]
    return _relabel(labels, owner)


def _frame_colour(colours: np.ndarray, distance: float) -> np.ndarray | None:
    """The background's colour: the median of the image's outermost pixels, when at least 60%
    of them are within `distance` of it (a plain backdrop); None for a busy frame (a photo)."""
    frame = np.concatenate([colours[0], colours[-1], colours[:, 0], colours[:, -1]])
    median = np.median(frame, axis=0)
    plain = np.mean(np.linalg.norm(frame - median, axis=1) < distance) >= 0.6
    return median if plain else None


def _ring(region: Region, regions: list[Region], fill: float = 0.3) -> bool:
    """A thin band around another region (the blurred edge of an object), not an object."""
    if region.score >= fill:
        return False
    x0, y0, x1, y1 = region.box
    return any(
        other is not region
        and other.score >= fill
        and x0 <= other.box[0]
        and y0 <= other.box[1]
        and other.box[2] <= x1
        and other.box[3] <= y1
        for other in regions
    )


def labels_size(pixels: np.ndarray) -> int:
    return int(pixels.shape[0] * pixels.shape[1])


def _upsample(mask: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    return (
        np.asarray(
            Image.fromarray(mask.astype(np.uint8) * 255).resize(size, Image.Resampling.NEAREST)
        )
        > 0
    )
