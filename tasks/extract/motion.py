"""The extract stage's last step: motion facts for every annotated segment whose keyframes all
have facts under this configuration (`extractors.motion`), stored once per segment and
configuration."""

from __future__ import annotations

from benchfoundry.core.records import ImageRecord, MotionFactsRecord, SegmentRecord
from benchfoundry.extractors.motion import TRACKER, motion_events
from benchfoundry.storage.tables import RunFolder
from benchfoundry.storage.visual_context import current_facts


def track_segments(run: RunFolder, config_hash: str) -> int:
    """Motion facts for the segments that have none under `config_hash`; how many were made."""
    segments = run.table(SegmentRecord).records()
    if not segments:
        return 0
    done = {
        r["segment_id"]
        for r in run.table(MotionFactsRecord)
        .read(columns=["segment_id", "config_hash"])
        .to_pylist()
        if r["config_hash"] == config_hash
    }
    pending = [s for s in segments if s.segment_id not in done]
    if not pending:
        return 0
    facts = {i: f for i, f in current_facts(run).items() if f.config_hash == config_hash}
    sizes = {
        r["image_id"]: (r["width"], r["height"])
        for r in run.table(ImageRecord).read(columns=["image_id", "width", "height"]).to_pylist()
    }
    made = []
    for segment in pending:
        if not segment.frames or any(f not in facts for f in segment.frames):
            continue  # a keyframe whose extraction failed (quarantined): nothing to track
        width, height = sizes[segment.frames[0]]
        frames = [
            (at, facts[f].instances)
            for at, f in zip(segment.frame_times, segment.frames, strict=True)
        ]
        made.append(
            MotionFactsRecord(
                segment_id=segment.segment_id,
                clip_id=segment.clip_id,
                config_hash=config_hash,
                tracker=TRACKER,
                frames=list(segment.frames),
                events=motion_events(frames, float(width), float(height)),
            )
        )
    return run.table(MotionFactsRecord).append(made).added
