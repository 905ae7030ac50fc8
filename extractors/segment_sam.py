"""SAM through Meta's `segment-anything` package and its automatic mask generator, for a
checkpoint file given by path (ViT-H/L/B, `sam_model_type`); on the GPU when there is one.

The package imports torchvision, and PyPI's torchvision does not import beside the CPU build of
torch 2.13.0 that the default install uses. Install the pair that works together to use it:
`pip install torch==2.14.1 torchvision==0.29.1 segment-anything`. The default install's SAM
backend is `hf-sam` (transformers), which needs no torchvision."""

from __future__ import annotations

import importlib.metadata
import threading
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from benchfoundry.extractors.base import (
    ExtractorFailed,
    ExtractorUnavailable,
    Region,
    Segmenter,
    default_batch_size,
)


class SegmentAnything(Segmenter):
    name = "sam"

    def __init__(self, settings: dict[str, Any]) -> None:
        super().__init__(settings)
        checkpoint = settings.get("checkpoint")
        if not checkpoint or not Path(checkpoint).is_file():
            raise ExtractorUnavailable(
                "segmenter 'sam' needs a checkpoint file: set options.extract.segmenter_checkpoint "
                "to a SAM .pth file (e.g. sam_vit_b_01ec64.pth)"
            )
        try:
            import torch
            from segment_anything import SamAutomaticMaskGenerator, sam_model_registry
        except (ImportError, RuntimeError) as exc:
            raise ExtractorUnavailable(
                f"segmenter 'sam' needs segment-anything with a torchvision that imports ({exc}): "
                "pip install torch==2.14.1 torchvision==0.29.1 segment-anything, or use 'hf-sam'"
            ) from None
        self.checkpoint = str(checkpoint)
        model_type = str(settings.get("sam_model_type", "vit_b"))
        sam = sam_model_registry[model_type](checkpoint=self.checkpoint)
        device = "cuda" if torch.cuda.is_available() else "cpu"
        sam.to(device)
        self.batch_size = default_batch_size(settings, device)
        self.generator = SamAutomaticMaskGenerator(
            sam, points_per_side=int(settings.get("points_per_side", 16))
        )
        self._lock = threading.Lock()
        self.min_share = float(settings.get("min_share", 0.002))
        self.max_regions = int(settings.get("max_regions", 12))

    @property
    def model(self) -> str:
        return self.checkpoint

    @property
    def version(self) -> str:
        return importlib.metadata.version("segment-anything")

    def segment(self, image: Image.Image) -> list[Region]:
        return self.segment_many([image])[0]

    def segment_many(self, images: list[Image.Image]) -> list[list[Region]]:
        """SAM's image encoder once over the batch, then the automatic mask generator's point
        grid on each image's embedding. The generator sets each crop's image itself; with no
        crop layers (ours: none) its one crop is the whole image, whose embedding is the
        batch's, so setting it is replaced by handing it over. One image: the generator as is."""
        pixels = [np.asarray(image.convert("RGB")) for image in images]
        try:
            with self._lock:  # the generator keeps the current image on a shared predictor
                if len(pixels) == 1 or self.generator.crop_n_layers != 0:
                    found = [self.generator.generate(p) for p in pixels]
                else:
                    found = self._generate_batch(pixels)
        except (RuntimeError, ValueError) as exc:
            raise ExtractorFailed(f"SAM: {type(exc).__name__}: {exc}") from None
        return [self._regions(p, f) for p, f in zip(pixels, found, strict=True)]

    def _generate_batch(self, pixels: list[np.ndarray]) -> list[list[dict[str, Any]]]:
        import torch

        predictor = self.generator.predictor
        model = predictor.model
        resized = [predictor.transform.apply_image(p) for p in pixels]
        with torch.no_grad():
            batch = torch.cat(
                [
                    model.preprocess(
                        torch.as_tensor(r, device=predictor.device).permute(2, 0, 1)[None]
                    )
                    for r in resized
                ]
            )
            features = model.image_encoder(batch)
        out = []
        for i, (p, r) in enumerate(zip(pixels, resized, strict=True)):

            def handed_over(
                _image: np.ndarray,
                _format: str = "RGB",
                embedding: Any = features[i : i + 1],
                original: tuple[int, ...] = p.shape[:2],
                size: tuple[int, ...] = r.shape[:2],
            ) -> None:
                predictor.reset_image()
                predictor.original_size = original
                predictor.input_size = size
                predictor.features = embedding
                predictor.is_image_set = True

            predictor.set_image = handed_over  # this instance only, while its batch runs
            try:
                out.append(self.generator.generate(p))
            finally:
                del predictor.set_image  # the class's own method again
        return out

    def _regions(self, pixels: np.ndarray, found: list[dict[str, Any]]) -> list[Region]:
        total = pixels.shape[0] * pixels.shape[1]
        regions = [
            Region(
                (float(x), float(y), float(x + w), float(y + h)),
                int(m["area"]),
                float(m["predicted_iou"]),
                m["segmentation"],
            )
            for m in found
            for x, y, w, h in [m["bbox"]]
            if m["area"] >= self.min_share * total
        ]
        regions.sort(key=lambda r: -r.area)
        return regions[: self.max_regions]
