"""What the evidence overlay draws over a question's image: the visual facts its evidence cites,
found again in the image's `visual_facts`.

A template question's evidence names the facts it rests on as text: instance boxes as
`[x0, y0, x1, y1]` (pixels of the original image, rounded; a count lists the box of every object
it counted) and OCR lines as `OCR line "..."`. The overlay draws those as *cited* shapes, and the
image's other instances and text lines as context. A box the evidence names that no stored fact
matches is still drawn, labelled `evidence`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from benchfoundry.core.records import Instance, VisualFactsRecord

NUMBER = r"(-?\d+(?:\.\d+)?)"
BOX = re.compile(rf"\[{NUMBER}, {NUMBER}, {NUMBER}, {NUMBER}\]")
OCR_LINE = re.compile(r'OCR line "(.*)"')
# A count or a size by one attribute ("11 instances with the attribute grey", "6 instances, 1 of
# them yellow", "the red object covers 2962 pixels"): the instances with that first attribute.
ATTRIBUTE = re.compile(r"with the attribute (\w+)|of them (\w+)|the (\w+) object covers")


def cited_boxes(evidence: Sequence[str]) -> list[tuple[int, ...]]:
    """The boxes the evidence names, rounded to whole pixels, in order, once each."""
    out: list[tuple[int, ...]] = []
    for line in evidence:
        for match in BOX.finditer(line):
            box = tuple(round(float(v)) for v in match.groups())
            if box not in out:
                out.append(box)
    return out


def cited_texts(evidence: Sequence[str]) -> set[str]:
    """The OCR lines the evidence quotes."""
    return {m.group(1) for line in evidence if (m := OCR_LINE.search(line))}


def cited_attributes(evidence: Sequence[str]) -> set[str]:
    """The attributes (colours) a count or a size in the evidence is about, where it does not
    list the boxes it counted (evidence written before counts listed them): a line that lists
    its boxes cites those alone."""
    return {
        next(g for g in m.groups() if g)
        for line in evidence
        if not BOX.search(line)
        for m in ATTRIBUTE.finditer(line)
    }


def _rounded(box: Sequence[float]) -> tuple[int, ...]:
    return tuple(round(v) for v in box)


def _instance_label(instance: Instance) -> str:
    """The segmenter's label with the first attribute (its colour), or whichever there is."""
    colour = instance.attributes[0] if instance.attributes else None
    if instance.label and colour:
        return f"{instance.label} ({colour})"
    return instance.label or colour or "object"


def _matches(facts: VisualFactsRecord, boxes: set[tuple[int, ...]], texts: set[str]) -> int:
    return sum(_rounded(i.box) in boxes for i in facts.instances) + sum(
        line.text in texts for line in facts.ocr_lines
    )


def overlay_shapes(
    evidence: Sequence[str], facts: Sequence[VisualFactsRecord]
) -> list[dict[str, Any]]:
    """The shapes to draw: `{kind, box, label, cited}` with `kind` instance, text or evidence and
    `box` as [x0, y0, x1, y1] in the original image's pixels; cited shapes first. Of several fact
    records for the image (extractor configurations), the one that matches most of the evidence."""
    boxes = cited_boxes(evidence)
    texts = cited_texts(evidence)
    attributes = cited_attributes(evidence)
    chosen = max(facts, key=lambda f: _matches(f, set(boxes), texts), default=None)
    shapes: list[dict[str, Any]] = []
    matched: set[tuple[int, ...]] = set()
    if chosen is not None:
        for instance in chosen.instances:
            box = _rounded(instance.box)
            cited = box in boxes or (
                len(instance.attributes) >= 3 and instance.attributes[0] in attributes
            )
            matched.update([box] if box in boxes else [])
            shapes.append(
                {
                    "kind": "instance",
                    "box": [float(v) for v in instance.box],
                    "label": _instance_label(instance),
                    "cited": cited,
                }
            )
        for line in chosen.ocr_lines:
            shapes.append(
                {
                    "kind": "text",
                    "box": [float(v) for v in line.box],
                    "label": line.text,
                    "cited": line.text in texts,
                }
            )
    for box in boxes:
        if box not in matched:
            shapes.append(
                {
                    "kind": "evidence",
                    "box": [float(v) for v in box],
                    "label": "evidence",
                    "cited": True,
                }
            )
    return sorted(shapes, key=lambda s: not s["cited"])
