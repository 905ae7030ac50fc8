"""An image's visual facts as the plain text a language model reads in place of pixels:
captions, then instances with boxes and attributes, then OCR lines, within a size cap.

The facts come in three parts (`PARTS`): a reader may be shown only some of them, so that
readers of different parts make an ensemble whose members see different things."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from benchfoundry.core.records import MotionFactsRecord, VisualFactsRecord
from benchfoundry.storage.tables import RunFolder

# The parts of an image's facts, in the order they are rendered, and what a report calls each.
PARTS = ("captions", "instances", "ocr")
PART_LABELS = {"captions": "captions", "instances": "objects", "ocr": "text"}


def current_facts(run: RunFolder) -> dict[str, VisualFactsRecord]:
    """One facts record per image: the one made under the configuration of the run's latest
    extract (as its manifest records it), else the first by configuration hash. A run extracted
    again under a new configuration keeps the old facts too; they are not what it reads."""
    return choose_facts(
        run.table(VisualFactsRecord).records(),
        run.read_manifest().get("extract", {}).get("summary", {}).get("config_hash"),
    )


def choose_facts(
    records: Iterable[VisualFactsRecord], preferred: str | None
) -> dict[str, VisualFactsRecord]:
    chosen: dict[str, VisualFactsRecord] = {}
    for record in sorted(records, key=lambda r: (r.config_hash != preferred, r.config_hash)):
        chosen.setdefault(record.image_id, record)
    return chosen


def parts_in_order(parts: Iterable[str]) -> tuple[str, ...]:
    """The named parts in rendering order, once each; `ValueError` names an unknown or missing
    part."""
    chosen = set(parts)
    if unknown := sorted(chosen - set(PARTS)):
        raise ValueError(
            f"unknown part(s) of the facts {unknown}; the parts are {', '.join(PARTS)}"
        )
    if not chosen:
        raise ValueError(f"name at least one part of the facts: {', '.join(PARTS)}")
    return tuple(p for p in PARTS if p in chosen)


def parts_label(parts: Sequence[str]) -> str:
    """What a reader of `parts` sees, as reports show it: `facts` for all of them, else
    `facts: objects` (or `facts: objects, text`)."""
    parts = parts_in_order(parts)
    return "facts" if parts == PARTS else "facts: " + ", ".join(PART_LABELS[p] for p in parts)


def motion_by_frame(run: RunFolder, config_hash: str | None = None) -> dict[str, list[str]]:
    """For each keyframe of an annotated video segment, what happens in its segment (the
    motion facts' sentences), from the run's `motion_facts` of `config_hash` (any when None)."""
    out: dict[str, list[str]] = {}
    for record in run.table(MotionFactsRecord).records():
        if config_hash is None or record.config_hash == config_hash:
            for frame in record.frames:
                out.setdefault(frame, [e.text for e in record.events])
    return out


def _lines(facts: VisualFactsRecord, parts: Sequence[str], motion: Sequence[str] = ()) -> list[str]:
    lines: list[str] = []
    if "captions" in parts and facts.captions:
        lines.append("Captions:")
        lines += [f"- {c.text}" for c in facts.captions]
    if "instances" in parts and facts.instances:
        lines.append("Objects (box as x0, y0, x1, y1 in pixels):")
        for inst in facts.instances:
            label = inst.label or "object"
            box = ", ".join(f"{v:.0f}" for v in inst.box)
            attrs = f"; {', '.join(inst.attributes)}" if inst.attributes else ""
            caption = f"; {inst.dense_caption}" if inst.dense_caption else ""
            lines.append(f"- {label} at ({box}){attrs}{caption}")
    if "instances" in parts and motion:
        lines.append("What happens in the video around this frame (tracked objects):")
        lines += [f"- {text}" for text in motion]
    if "ocr" in parts and facts.ocr_lines:
        lines.append("Text in the image:")
        lines += [
            f'- "{o.text}" at ({", ".join(f"{v:.0f}" for v in o.box)})' for o in facts.ocr_lines
        ]
    return lines


def render(
    facts: VisualFactsRecord,
    max_chars: int = 2000,
    parts: Sequence[str] = PARTS,
    motion: Sequence[str] = (),
) -> str:
    """The visual context of one image (and, for a clip's keyframe, what happens in its
    segment), of the chosen `parts` only; lines past `max_chars` are left out and counted."""
    parts = parts_in_order(parts)
    lines = _lines(facts, parts, motion)
    out: list[str] = []
    used = 0
    # One long line (a composed caption) must not crowd out the other parts shown.
    line_cap = max(80, max_chars // len(parts))
    for i, line in enumerate(lines):
        if len(line) > line_cap:
            line = line[: line_cap - 1] + "…"
        note = f"({len(lines) - i} more lines left out)"
        if used + len(line) + 1 > max_chars - len(note) - 1 and i < len(lines) - 1:
            out.append(note)
            break
        out.append(line)
        used += len(line) + 1
    if out:
        return "\n".join(out)
    if parts == PARTS:
        return "(no visual facts were extracted)"
    return f"(no {' or '.join(PART_LABELS[p] for p in parts)} among the extracted visual facts)"


class FactsIndex:
    """Visual context by image id, from a run's `visual_facts` table: the chosen `parts` of
    each image's facts within `max_chars`. When an image has facts from several extractor
    configurations, the first by configuration hash is used."""

    def __init__(
        self,
        records: list[VisualFactsRecord],
        max_chars: int = 2000,
        parts: Sequence[str] = PARTS,
        preferred: str | None = None,
        motion: dict[str, list[str]] | None = None,
    ) -> None:
        self.by_image = choose_facts(records, preferred)
        self.max_chars = max_chars
        self.parts = parts_in_order(parts)
        self.motion = motion or {}

    @classmethod
    def from_run(
        cls, run: RunFolder, max_chars: int = 2000, parts: Sequence[str] = PARTS
    ) -> FactsIndex:
        by_image = current_facts(run)
        hashes = {r.config_hash for r in by_image.values()}
        motion = motion_by_frame(run, next(iter(hashes)) if len(hashes) == 1 else None)
        return cls(list(by_image.values()), max_chars, parts, motion=motion)

    def context(self, image_id: str) -> str | None:
        """The image's visual context; None when the image has no facts, "" when it has
        nothing of this index's parts."""
        record = self.by_image.get(image_id)
        if record is None:
            return None
        motion = self.motion.get(image_id, ())
        if not _lines(record, self.parts, motion):
            return ""
        return render(record, self.max_chars, self.parts, motion)
