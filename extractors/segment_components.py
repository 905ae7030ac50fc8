"""The second reading of an image's objects: colour quantisation, then connected components.
It shares nothing with the default segmenter (graph-based segmentation and its clean-up) but
the pixels, so where the two find the same objects a template may rest a key on them
(`agreement`), and where they differ it may not.

How: the image's colours are reduced to a small palette (median cut, no dithering), palette
colours closer than `merge_distance` become one, and each colour's pixels fall into connected
pieces (8-connected: shapes that meet at a corner are one piece, as an eye joins them). The
frame's colour (where the frame is one colour) is the background. A piece a few pixels wide
that lies along a wider piece is that piece's blended edge and is dropped, and so is one that
thin along such an edge (JPEG's ringing bands a square's edge in three colours); a piece that thin
standing alone (an outline, a stroke) is kept: it is something a person sees. Every piece of at
least `min_share` of the image (looked at with its longer side `ANALYSIS_SIDE` long) is a region, so a small dot that the default segmenter's size threshold
drops is still seen here."""

from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image
from scipy import ndimage

from benchfoundry.extractors.base import ANALYSIS_SIDE, Region, Segmenter, analysis_copy

_EIGHT = np.ones((3, 3), bool)


class ColourComponents(Segmenter):
    name = "components"

    def __init__(self, settings: dict[str, Any]) -> None:
        super().__init__(settings)
        self.colours = int(settings.get("colours", 16))
        self.merge_distance = float(settings.get("merge_distance", 40.0))
        # a piece this share of the image or more is a region: 40 pixels of a 384 x 288 copy
        # (about 6 x 6), below the default segmenter's `min_share`, so that a dot too small
        # for it is seen here and the two readings disagree rather than both missing it
        self.min_share = float(settings.get("min_share", 0.0003))
        self.max_regions = int(settings.get("max_regions", 32))
        self.side = int(settings.get("side", ANALYSIS_SIDE))  # every image is looked at this size
        self.edge_width = float(settings.get("edge_width", 3.0))

    @property
    def model(self) -> str:
        return (
            f"median-cut({self.colours}, merge={self.merge_distance:g}, backdrop apart)"
            "+8-connected components, edge bands chained"
            f"(min_share={self.min_share:g})@{self.side}"
        )

    def segment(self, image: Image.Image) -> list[Region]:
        rgb, factor = analysis_copy(image, self.side)
        edge = max(1.0, factor)  # an enlarged image's blurred edges are that much wider
        groups = self._groups(rgb)
        background = _frame_group(groups)
        regions = []
        wide = np.zeros(groups.shape, bool)
        pieces = []
        min_area = self.min_share * groups.size
        for group in np.unique(groups):
            if group == background:
                continue
            labels, count = ndimage.label(groups == group, structure=_EIGHT)
            for index, box in enumerate(ndimage.find_objects(labels), start=1):
                mask = labels[box] == index
                if mask.sum() < min_area:
                    continue
                width = 2 * float(ndimage.distance_transform_edt(np.pad(mask, 1)).max()) - 1
                pieces.append((box, mask, width))
                if width > self.edge_width * edge:
                    wide[box] |= mask
        # The blended edge of a wider piece, and the edge's own blends beside it: JPEG's
        # ringing draws a square's edge as three thin bands of three colours (dark red, pink,
        # a halo whiter than the paper), only the first of which lies along the square.
        thin = [width <= self.edge_width * edge for _, _, width in pieces]
        edge_of = np.zeros(len(pieces), bool)
        for _ in range(3):
            near = ndimage.binary_dilation(wide, structure=_EIGHT, iterations=round(2 * edge))
            grown = False
            for k, (box, mask, _) in enumerate(pieces):
                if thin[k] and not edge_of[k] and (near[box] & mask).any():
                    edge_of[k] = grown = True
                    wide[box] |= mask
            if not grown:
                break
        for k, (box, mask, _) in enumerate(pieces):
            if edge_of[k]:
                continue
            full = np.zeros(groups.shape, bool)
            full[box] = mask
            regions.append(_region(full, box, factor, rgb.size, image.size))
        regions.sort(key=lambda r: -r.area)
        return regions[: self.max_regions]

    def _groups(self, rgb: Image.Image) -> np.ndarray:
        """Each pixel's colour group: its median-cut palette entry, each entry joined to the
        first more common one within `merge_distance` of it (a shade of the same paint). Where
        the frame is plain, the pixels within half `merge_distance` of its colour are one group,
        the backdrop, and the palette is cut from the rest: a paper's faint shades would
        otherwise take most of the entries, and a small red square inside a black one, too rare
        for an entry of its own, would join the black."""
        pixels = np.asarray(rgb, np.float32)
        backdrop = _backdrop(pixels, self.merge_distance / 2)
        if backdrop.all():  # a blank picture: its one colour is cut like any other
            backdrop[:] = False
        rest = pixels[~backdrop]
        quantised = Image.fromarray(rest[None].astype(np.uint8)).quantize(
            colors=self.colours, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE
        )
        index = np.asarray(quantised)[0]
        palette = np.asarray(quantised.getpalette()[: 3 * self.colours], np.float32).reshape(-1, 3)
        counts = np.bincount(index, minlength=len(palette))
        owner = np.arange(len(palette))
        kept: list[int] = []
        for entry in np.argsort(-counts, kind="stable"):
            if counts[entry] == 0:
                break
            near = [
                k for k in kept if np.linalg.norm(palette[entry] - palette[k]) < self.merge_distance
            ]
            if near:
                owner[entry] = near[0]
            else:
                kept.append(int(entry))
        groups = np.full(pixels.shape[:2], len(palette), np.int32)  # the backdrop's group
        groups[~backdrop] = owner[index]
        return groups


def _backdrop(pixels: np.ndarray, within: float) -> np.ndarray:
    """The pixels within `within` (RGB) of the frame's median colour where at least 60% of the
    frame's pixels are (a plain frame); none otherwise."""
    frame = np.concatenate([pixels[0], pixels[-1], pixels[:, 0], pixels[:, -1]])
    median = np.median(frame, axis=0)
    if np.mean(np.linalg.norm(frame - median, axis=-1) < within) < 0.6:
        return np.zeros(pixels.shape[:2], bool)
    return np.linalg.norm(pixels - median, axis=-1) < within


def _frame_group(groups: np.ndarray) -> int | None:
    """The group of the image's frame when at least 60% of its outermost pixels share it."""
    frame = np.concatenate([groups[0], groups[-1], groups[:, 0], groups[:, -1]])
    values, counts = np.unique(frame, return_counts=True)
    best = int(np.argmax(counts))
    return int(values[best]) if counts[best] >= 0.6 * len(frame) else None


def _region(
    mask: np.ndarray,
    box: tuple[slice, slice],
    factor: float,
    analysed: tuple[int, int],
    size: tuple[int, int],
) -> Region:
    ys, xs = box
    scaled = tuple(float(v / factor) for v in (xs.start, ys.start, xs.stop, ys.stop))
    area = int(mask.sum() / factor**2)
    fill = float(mask.sum() / ((xs.stop - xs.start) * (ys.stop - ys.start)))
    if factor != 1:
        mask = (
            np.asarray(Image.fromarray(mask.astype(np.uint8) * 255).resize(size, Image.NEAREST)) > 0
        )
    return Region(box=scaled, area=area, score=fill, mask=mask)  # type: ignore[arg-type]
