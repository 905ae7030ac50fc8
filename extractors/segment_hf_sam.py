"""SAM through `transformers` (`SamModel`), for a checkpoint given by path or id (e.g. a local
copy of facebook/sam-vit-base); on the GPU when there is one. Automatic mask generation is done
here: a grid of point prompts, the best of SAM's three masks per point, filtered by predicted
IoU and stability, then non-maximum suppression in numpy. It needs no torchvision, which
transformers' own mask-generation pipeline does. `segment_many` encodes a batch of images at
once (`batch_size`, default 8 on a GPU, 1 on a CPU) and gives what `segment` gives one by one."""

from __future__ import annotations

import importlib.metadata
import threading
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

_LOCK = threading.Lock()


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of every box in `a` (n, 4) with every box in `b` (m, 4)."""
    x0 = np.maximum(a[:, None, 0], b[None, :, 0])
    y0 = np.maximum(a[:, None, 1], b[None, :, 1])
    x1 = np.minimum(a[:, None, 2], b[None, :, 2])
    y1 = np.minimum(a[:, None, 3], b[None, :, 3])
    inter = np.clip(x1 - x0, 0, None) * np.clip(y1 - y0, 0, None)
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    return inter / np.maximum(area_a[:, None] + area_b[None, :] - inter, 1e-9)


def non_max_suppression(boxes: np.ndarray, scores: np.ndarray, threshold: float) -> list[int]:
    """Indices kept, best score first, dropping boxes overlapping a kept one above `threshold`."""
    order = list(np.argsort(-scores))
    kept: list[int] = []
    while order:
        best = order.pop(0)
        kept.append(int(best))
        if order:
            overlaps = box_iou(boxes[[best]], boxes[order])[0]
            order = [i for i, o in zip(order, overlaps, strict=True) if o <= threshold]
    return kept


class TransformersSAM(Segmenter):
    name = "hf-sam"

    def __init__(self, settings: dict[str, Any]) -> None:
        super().__init__(settings)
        checkpoint = settings.get("checkpoint")
        if not checkpoint:
            raise ExtractorUnavailable(
                "segmenter 'hf-sam' needs a checkpoint: set options.extract.segmenter_checkpoint to a "
                "SAM model folder or id (e.g. a local copy of facebook/sam-vit-base)"
            )
        import torch
        from transformers import SamModel, SamProcessor

        self.checkpoint = str(checkpoint)
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        try:
            with _LOCK:
                self.sam = SamModel.from_pretrained(self.checkpoint).to(self.device).eval()
                self.processor = SamProcessor.from_pretrained(self.checkpoint)
        except OSError as exc:
            raise ExtractorUnavailable(
                f"segmenter 'hf-sam': cannot load {self.checkpoint}: {exc}"
            ) from None
        self.points_per_side = int(settings.get("points_per_side", 8))
        self.points_per_batch = int(settings.get("points_per_batch", 64))
        self.iou_threshold = float(settings.get("pred_iou_thresh", 0.7))
        self.stability_threshold = float(settings.get("stability_score_thresh", 0.8))
        self.nms_threshold = float(settings.get("nms_thresh", 0.7))
        self.min_share = float(settings.get("min_share", 0.002))
        self.max_regions = int(settings.get("max_regions", 12))
        self.max_side = int(settings.get("max_side", 512))
        self.batch_size = default_batch_size(settings, self.device)

    @property
    def model(self) -> str:
        return self.checkpoint

    @property
    def version(self) -> str:
        return importlib.metadata.version("transformers")

    def _grid(self, width: int, height: int) -> list[list[float]]:
        n = self.points_per_side
        xs = (np.arange(n) + 0.5) / n * width
        ys = (np.arange(n) + 0.5) / n * height
        return [[float(x), float(y)] for y in ys for x in xs]

    def _bounded(self, image: Image.Image) -> Image.Image:
        """RGB at a bounded size: the masks of every point are upscaled to this size before
        filtering, so a 50-megapixel image would otherwise need tens of GB."""
        rgb = image.convert("RGB")
        factor = min(1.0, self.max_side / max(rgb.size))
        if factor == 1:
            return rgb
        return rgb.resize((max(1, round(rgb.width * factor)), max(1, round(rgb.height * factor))))

    def segment(self, image: Image.Image) -> list[Region]:
        return self.segment_many([image])[0]

    def segment_many(self, images: list[Image.Image]) -> list[list[Region]]:
        """The image encoder once over the batch (the processor resizes and pads every image to
        the same square), then each chunk of point prompts decoded for every image at once; the
        masks are upscaled and filtered one image at a time, as for a single image."""
        import torch

        rgbs = [self._bounded(image) for image in images]
        grids = [[[p] for p in self._grid(rgb.width, rgb.height)] for rgb in rgbs]
        found: list[tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]] = [
            ([], [], []) for _ in rgbs
        ]
        try:
            with _LOCK, torch.no_grad():
                inputs = self.processor(images=rgbs, input_points=grids, return_tensors="pt")
                embeddings = self.sam.get_image_embeddings(inputs["pixel_values"].to(self.device))
                for start in range(0, len(grids[0]), self.points_per_batch):
                    points = inputs["input_points"][:, start : start + self.points_per_batch]
                    out = self.sam(
                        image_embeddings=embeddings,
                        input_points=points.to(self.device),
                        multimask_output=True,
                    )
                    best = out.iou_scores.argmax(dim=2)  # (images, points): the best of 3
                    rows = torch.arange(best.shape[1], device=best.device)
                    for i, (masks, scores, stability) in enumerate(found):
                        # Only the chosen mask is upscaled, on the model's device.
                        logits = self.processor.image_processor.post_process_masks(
                            [out.pred_masks[i, rows, best[i]][:, None]],
                            inputs["original_sizes"][i : i + 1],
                            inputs["reshaped_input_sizes"][i : i + 1],
                            binarize=False,
                        )[0][:, 0]  # (points, H, W)
                        masks.append((logits > 0).cpu().numpy())
                        scores.append(out.iou_scores[i, rows, best[i]].cpu().numpy())
                        high = (logits > 1.0).sum((1, 2)).float()
                        low = (logits > -1.0).sum((1, 2)).float()
                        stability.append((high / low.clamp(min=1)).cpu().numpy())
        except (RuntimeError, ValueError) as exc:
            raise ExtractorFailed(f"SAM: {type(exc).__name__}: {exc}") from None
        return [
            self._select(np.concatenate(m), np.concatenate(s), np.concatenate(t))
            for m, s, t in found
        ]

    def _select(self, masks: np.ndarray, scores: np.ndarray, stability: np.ndarray) -> list[Region]:
        total = masks.shape[1] * masks.shape[2]
        areas = masks.sum(axis=(1, 2))
        keep = (
            (scores >= self.iou_threshold)
            & (stability >= self.stability_threshold)
            & (areas >= self.min_share * total)
        )
        idx = np.flatnonzero(keep)
        if idx.size == 0:
            return []
        boxes = []
        for i in idx:
            ys, xs = np.nonzero(masks[i])
            boxes.append([xs.min(), ys.min(), xs.max() + 1, ys.max() + 1])
        boxes_array = np.asarray(boxes, dtype=float)
        kept = non_max_suppression(boxes_array, scores[idx], self.nms_threshold)
        regions = [
            Region(
                tuple(float(v) for v in boxes_array[k]),
                int(areas[idx[k]]),
                float(scores[idx[k]]),
                masks[idx[k]],
            )
            for k in kept
        ]
        regions.sort(key=lambda r: -r.area)
        return regions[: self.max_regions]
