"""The frame every key is measured in: an image's facts scaled as if the image were shown with
its longer side `ANALYSIS_SIDE` long, so that every margin (in `agreement`, the templates'
geometry and the automatic reviewer's checks) is a share of the image, never a pixel count.
Each instance keeps its box and area in the image's own pixels for the evidence it is cited by.
"""

from __future__ import annotations

from benchfoundry.core.records import Instance, VisualFactsRecord
from benchfoundry.extractors.base import ANALYSIS_SIDE


class Framed(Instance):
    """An instance measured in the frame the templates measure in (the image's longer side
    `ANALYSIS_SIDE` long), with its box and area in the image's own pixels, which its
    evidence cites (the review desk draws those boxes)."""

    image_box: list[float]
    image_area: int


def image_box(instance: Instance) -> list[float]:
    """The instance's box in the image's own pixels."""
    return instance.image_box if isinstance(instance, Framed) else instance.box


def image_area(instance: Instance) -> int:
    return instance.image_area if isinstance(instance, Framed) else instance.mask_area


def framed(
    facts: VisualFactsRecord, size: tuple[float, float]
) -> tuple[VisualFactsRecord, tuple[float, float]]:
    """The facts measured in the frame of an image `ANALYSIS_SIDE` pixels across its longer
    side (boxes, areas and text lines scaled), and the image's size in that frame."""
    k = ANALYSIS_SIDE / max(1.0, *size)

    def frame(i: Instance) -> Framed:
        return Framed(
            **{
                **i.model_dump(exclude={"image_box", "image_area"}),
                "box": [v * k for v in i.box],
                "mask_area": round(i.mask_area * k * k),
            },
            image_box=list(image_box(i)),
            image_area=image_area(i),
        )

    lines = [line.model_copy(update={"box": [v * k for v in line.box]}) for line in facts.ocr_lines]
    second = [
        line.model_copy(update={"box": [v * k for v in line.box]})
        for line in facts.second_ocr_lines
    ]
    scaled = facts.model_copy(
        update={
            "instances": [frame(i) for i in facts.instances],
            "second_instances": [frame(i) for i in facts.second_instances],
            "ocr_lines": lines,
            "second_ocr_lines": second,
        }
    )
    return scaled, (size[0] * k, size[1] * k)
