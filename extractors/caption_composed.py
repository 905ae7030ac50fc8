"""The offline default captioner: a factual description composed from what the other
extractors found (objects with colours and positions, text read). It is named for what it is,
`composed`, and never presented as a neural caption."""

from __future__ import annotations

from typing import Any

from PIL import Image

from benchfoundry.core.records import Caption
from benchfoundry.extractors.base import Captioner
from benchfoundry.extractors.describe import FLAT
from benchfoundry.extractors.shapes import NOT_TRIANGULAR, SHAPE_NAMES

# attributes the sentence leaves out: how the region was read, not what a person would say
WORDLESS = (FLAT, NOT_TRIANGULAR)


class ComposedDescription(Captioner):
    name = "composed"

    def __init__(self, settings: dict[str, Any]) -> None:
        super().__init__(settings)

    def caption(self, image: Image.Image, context: str | None = None) -> list[Caption]:
        text = f"Composed from extracted facts (not a neural caption): a {image.width}x{image.height} image"
        text += f"; {context}" if context else "."
        return [
            Caption(text=text if text.endswith(".") else text + ".", backend=self.name, model=None)
        ]


def compose_context(instances: list[Any], ocr_lines: list[Any]) -> str:
    """One sentence of what was found, for the composed caption. Regions that are neither one
    flat colour nor labelled by a recogniser are called regions, not objects: on a photograph
    they are parts of the scene that the segmenter cut, not things a person would name."""
    parts = []
    if instances:
        plain = all(i.label or FLAT in i.attributes for i in instances)
        noun = "object" if plain else "region"
        described = [
            f"a {' '.join(a for a in i.attributes[:-1] if a not in WORDLESS and a not in SHAPE_NAMES)} "
            f"{next((a for a in i.attributes if a in SHAPE_NAMES), noun)} at the {i.attributes[-1]}"
            for i in instances[:6]
        ]
        parts.append(
            f"{len(instances)} {noun}{'s' if len(instances) != 1 else ''}: " + ", ".join(described)
        )
    if ocr_lines:
        parts.append("text reading " + "; ".join(f'"{o.text}"' for o in ocr_lines[:6]))
    return "; ".join(parts) if parts else "no objects or text were found"
