"""Candidates as the answering engine asks them: the image, or a clip's stretch with the
keyframe that stands for it (the gateway decides per model what of a clip it is shown)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from benchfoundry.answering.engine import MCQItem
from benchfoundry.core.records import CandidateRecord, ClipRecord
from benchfoundry.storage.tables import RunFolder


def clips_of(run: RunFolder, candidates: Sequence[CandidateRecord]) -> dict[str, bytes]:
    """The bytes of every clip the candidates ask about, by clip id."""
    wanted = {c.meta["clip_id"] for c in candidates if "clip_id" in c.meta}
    if not wanted:
        return {}
    table = run.table(ClipRecord).read(columns=["clip_id", "bytes"])
    return {
        i: b
        for i, b in zip(
            table.column("clip_id").to_pylist(), table.column("bytes").to_pylist(), strict=True
        )
        if i in wanted
    }


def mcq_item(candidate: CandidateRecord, clips: Mapping[str, bytes] | None = None) -> MCQItem:
    """The candidate as the answering engine asks it: its image, or its clip and stretch with
    the keyframe that stands for it."""
    clip = (clips or {}).get(candidate.meta.get("clip_id", ""))
    return MCQItem(
        question_id=candidate.question_id,
        question=candidate.question,
        options=tuple(candidate.options),
        answer=candidate.answer,
        hint=candidate.hint,
        image=candidate.image_id,
        category=candidate.dimension,
        video=(clip, float(candidate.meta["start"]), float(candidate.meta["end"]))
        if clip is not None
        else None,
    )
