"""The offline default segmenter: graph-based segmentation (Felzenszwalb, scikit-image), with
the background and specks removed. It emits the same regions a SAM backend does, so everything
downstream is identical; it needs no weights and no GPU."""

from __future__ import annotations

import importlib.metadata
from typing import Any

import numpy as np
from PIL import Image
from skimage.segmentation import felzenszwalb

from benchfoundry.extractors.base import Region, Segmenter


class ClassicalSegmenter(Segmenter):
    name = "classical"

    def __init__(self, settings: dict[str, Any]) -> None:
        super().__init__(settings)
        self.scale = float(settings.get("scale", 300))
        self.sigma = float(settings.get("sigma", 0.8))
        self.min_share = float(settings.get("min_share", 0.002))
        self.max_share = float(settings.get("max_share", 0.6))
        self.max_regions = int(settings.get("max_regions", 12))
        self.max_side = int(settings.get("max_side", 640))

    @property
    def model(self) -> str:
        return f"felzenszwalb(scale={self.scale:g}, sigma={self.sigma:g})"

    @property
    def version(self) -> str:
        return importlib.metadata.version("scikit-image")

    def segment(self, image: Image.Image) -> list[Region]:
        rgb = image.convert("RGB")
        factor = min(1.0, self.max_side / max(rgb.size))
        small = (
            rgb.resize((max(1, round(rgb.width * factor)), max(1, round(rgb.height * factor))))
            if factor < 1
            else rgb
        )
        pixels = np.asarray(small)
        labels = felzenszwalb(
            pixels,
            scale=self.scale,
            sigma=self.sigma,
            min_size=max(8, int(self.min_share * labels_size(pixels))),
        )
        total = labels.size
        height, width = labels.shape
        regions = []
        for label in np.unique(labels):
            mask = labels == label
            area = int(mask.sum())
            share = area / total
            if share < self.min_share:
                continue
            ys, xs = np.nonzero(mask)
            x0, y0, x1, y1 = xs.min(), ys.min(), xs.max() + 1, ys.max() + 1
            touches = sum(int(edge) for edge in (x0 == 0, y0 == 0, x1 == width, y1 == height))
            if share > self.max_share and touches >= 2:  # the background
                continue
            fill = area / ((x1 - x0) * (y1 - y0))
            if fill < 0.1:  # a thin outline or sliver, not an object
                continue
            box = tuple(float(v / factor) for v in (x0, y0, x1, y1))
            regions.append(
                Region(box=box, area=int(area / factor**2), score=float(fill), mask=mask)
            )
        regions = [r for r in regions if not _ring(r, regions)]
        regions.sort(key=lambda r: -r.area)
        kept = regions[: self.max_regions]
        if factor < 1:  # upscale only the masks that are kept
            kept = [Region(r.box, r.area, r.score, _upsample(r.mask, rgb.size)) for r in kept]
        return kept


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
