"""An image's visual facts as the plain text a language model reads in place of pixels:
captions, then instances with boxes and attributes, then OCR lines, within a size cap."""

from __future__ import annotations

from benchfoundry.core.records import VisualFactsRecord
from benchfoundry.storage.tables import RunFolder


def render(facts: VisualFactsRecord, max_chars: int = 2000) -> str:
    """The visual context of one image; lines past `max_chars` are left out and counted."""
    lines: list[str] = []
    if facts.captions:
        lines.append("Captions:")
        lines += [f"- {c.text}" for c in facts.captions]
    if facts.instances:
        lines.append("Objects (box as x0, y0, x1, y1 in pixels):")
        for inst in facts.instances:
            label = inst.label or "object"
            box = ", ".join(f"{v:.0f}" for v in inst.box)
            attrs = f"; {', '.join(inst.attributes)}" if inst.attributes else ""
            caption = f"; {inst.dense_caption}" if inst.dense_caption else ""
            lines.append(f"- {label} at ({box}){attrs}{caption}")
    if facts.ocr_lines:
        lines.append("Text in the image:")
        lines += [
            f'- "{o.text}" at ({", ".join(f"{v:.0f}" for v in o.box)})' for o in facts.ocr_lines
        ]
    out: list[str] = []
    used = 0
    line_cap = max(
        80, max_chars // 3
    )  # one long line (a composed caption) must not crowd out the rest
    for i, line in enumerate(lines):
        if len(line) > line_cap:
            line = line[: line_cap - 1] + "…"
        note = f"({len(lines) - i} more lines left out)"
        if used + len(line) + 1 > max_chars - len(note) - 1 and i < len(lines) - 1:
            out.append(f"({len(lines) - i} more lines left out)")
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out) if out else "(no visual facts were extracted)"


class FactsIndex:
    """Visual context by image id, from a run's `visual_facts` table. When an image has facts
    from several extractor configurations, the first by configuration hash is used."""

    def __init__(self, records: list[VisualFactsRecord], max_chars: int = 2000) -> None:
        self.by_image: dict[str, VisualFactsRecord] = {}
        for record in sorted(records, key=lambda r: r.config_hash):
            self.by_image.setdefault(record.image_id, record)
        self.max_chars = max_chars

    @classmethod
    def from_run(cls, run: RunFolder) -> FactsIndex:
        return cls(run.table(VisualFactsRecord).records())

    def context(self, image_id: str) -> str | None:
        record = self.by_image.get(image_id)
        return None if record is None else render(record, self.max_chars)
