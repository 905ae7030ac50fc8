"""Where a sample comes from, said for a person: its place in the taxonomy and its source. A
question on a clip names the clip's file, the stretch asked about and the generator, with the
keyframes' and segments' hashes apart (the page folds them away); other questions their source
and provenance fields as they are."""

from __future__ import annotations

from typing import Any

from benchfoundry.core.records import CandidateRecord
from benchfoundry.decisions.twins import language_of

# A clip question's `meta` fields said in its origin's words (the hashes folded away).
CLIP_FIELDS = ("video", "clip_id", "start", "end", "frames", "segments")
TWIN_FIELDS = ("language", "twin_of", "translation")  # a twin's: said by its own labels


def taxonomy_path(item: CandidateRecord) -> str:
    """The item's path in its taxonomy, root first, each level once: a flat taxonomy's
    dimension is its own category, and is said once."""
    parts: list[str] = []
    for level in (item.l2_category, item.category, item.dimension):
        if level and (not parts or parts[-1] != level):
            parts.append(level)
    return " / ".join(parts)


def origin(item: CandidateRecord) -> dict[str, Any]:
    """What the page's `source` line says: `clip` (file, start, end, clip id, keyframe and
    segment hashes) for a question on a clip, else None; `source`, `generator`, and `fields`,
    the other provenance fields as (name, value) pairs."""
    meta = item.meta
    clip = None
    if "clip_id" in meta:
        clip = {
            "video": meta.get("video") or meta["clip_id"],
            "clip_id": meta["clip_id"],
            "start": meta.get("start"),
            "end": meta.get("end"),
            "keyframes": [f for f in meta.get("frames", "").split(",") if f],
            "segments": [s for s in meta.get("segments", "").split(",") if s],
        }
    hidden = (CLIP_FIELDS if clip else ()) + (TWIN_FIELDS if language_of(item) else ())
    return {
        "clip": clip,
        "source": item.source,
        "generator": item.generator,
        "fields": [(k, v) for k, v in meta.items() if k not in hidden],
    }
