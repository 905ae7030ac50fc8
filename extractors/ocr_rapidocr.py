"""OCR with PP-OCRv4 models through ONNX Runtime, from `rapidocr-onnxruntime` (an optional
extra: `pip install rapidocr-onnxruntime`; it also brings a second OpenCV build)."""

from __future__ import annotations

import importlib.metadata
from typing import Any

import numpy as np
from PIL import Image

from benchfoundry.core.records import OcrLine
from benchfoundry.extractors.base import ExtractorFailed, ExtractorUnavailable, OcrBackend
from benchfoundry.extractors.ocr_onnxocr import is_text, polygon_box


class RapidOCR(OcrBackend):
    name = "rapidocr"

    def __init__(self, settings: dict[str, Any]) -> None:
        super().__init__(settings)
        try:
            from rapidocr_onnxruntime import RapidOCR as Engine
        except ImportError:
            raise ExtractorUnavailable(
                "ocr backend 'rapidocr' needs: pip install rapidocr-onnxruntime"
            ) from None
        self.engine = Engine()
        self.min_score = float(settings.get("min_score", 0.5))

    @property
    def model(self) -> str:
        return "PP-OCRv4 (rapidocr-onnxruntime)"

    @property
    def version(self) -> str:
        return importlib.metadata.version("rapidocr-onnxruntime")

    def read(self, image: Image.Image) -> list[OcrLine]:
        bgr = np.asarray(image.convert("RGB"))[:, :, ::-1].copy()
        try:
            result, _ = self.engine(bgr)
        except Exception as exc:  # the engine's own failures on one image
            raise ExtractorFailed(f"RapidOCR: {type(exc).__name__}: {exc}") from None
        return [
            OcrLine(text=text.strip(), box=polygon_box(points), score=float(score))
            for points, text, score in (result or [])
            if is_text(text) and float(score) >= self.min_score
        ]
