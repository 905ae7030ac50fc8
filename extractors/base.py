"""The roles an extractor can play, and what each returns. Backends subclass one role."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image

from benchfoundry.core.errors import UserError
from benchfoundry.core.records import Caption, OcrLine


class ExtractorUnavailable(UserError, RuntimeError):
    """A backend that cannot run here (a package or a checkpoint is missing); says what to do."""


class ExtractorFailed(RuntimeError):
    """A backend that failed on one image; the image is quarantined with this message."""


# The classical readings (both segmenters, the describer, the evidence reader) look at every image
# with its longer side this long, enlarged or reduced: their thresholds in pixels are then shares
# of the image, so a 96 px icon and a 6,000 px scan of one drawing give the same regions. (The
# bench's drawings are drawn at this size, where the thresholds were tuned.)
ANALYSIS_SIDE = 384


def analysis_copy(image: Image.Image, side: int = ANALYSIS_SIDE) -> tuple[Image.Image, float]:
    """The RGB image with its longer side `side` long (reduced by averaging, enlarged by bicubic
    interpolation), and the factor from the image's pixels to the copy's."""
    rgb = image.convert("RGB")
    factor = side / max(rgb.size)
    if abs(factor - 1) < 1e-9:
        return rgb, 1.0
    size = (max(1, round(rgb.width * factor)), max(1, round(rgb.height * factor)))
    method = Image.Resampling.BOX if factor < 1 else Image.Resampling.BICUBIC
    return rgb.resize(size, method), factor


@dataclass(frozen=True)
class Region:
    """A segmented region: box (x0, y0, x1, y1) in pixels, mask area, quality score, and the
    boolean mask itself (not stored; the describer reads colours through it)."""

    box: tuple[float, float, float, float]
    area: int
    score: float
    mask: np.ndarray


class Backend:
    """Common to every backend: a name, the model it runs, a version, its settings."""

    role: str = ""
    name: str = ""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings

    @property
    def model(self) -> str | None:
        return None

    @property
    def version(self) -> str:
        return "1"


class OcrBackend(Backend, ABC):
    role = "ocr"

    @abstractmethod
    def read(self, image: Image.Image) -> list[OcrLine]:
        """Text lines with their box (x0, y0, x1, y1) and confidence."""


def default_batch_size(settings: dict[str, Any], device: str) -> int:
    """Images per batched call: the `batch_size` setting, else 8 on a GPU and 1 on a CPU (where a
    batch saves little time and costs a batch's memory)."""
    return max(1, int(settings.get("batch_size") or (8 if device.startswith("cuda") else 1)))


class Segmenter(Backend, ABC):
    role = "segmenter"
    batch_size = 1  # images the extract stage hands `segment_many` at once

    @abstractmethod
    def segment(self, image: Image.Image) -> list[Region]:
        """Object regions, largest first."""

    def segment_many(self, images: list[Image.Image]) -> list[list[Region]]:
        """`segment` of each image, in order; backends whose model batches override it."""
        return [self.segment(image) for image in images]


class Captioner(Backend, ABC):
    role = "captioner"
    batch_size = 1  # images the extract stage hands `caption_many` at once

    @abstractmethod
    def caption(self, image: Image.Image, context: str | None = None) -> list[Caption]:
        """Captions of the whole image (or of a crop); `context` is what the other extractors
        found, for captioners that compose from it."""

    def caption_many(
        self, images: list[Image.Image], contexts: list[str | None] | None = None
    ) -> list[list[Caption]]:
        """`caption` of each image with its context, in order; backends whose model batches
        override it."""
        contexts = contexts if contexts is not None else [None] * len(images)
        return [
            self.caption(image, context) for image, context in zip(images, contexts, strict=True)
        ]
