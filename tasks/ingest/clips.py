"""Clips at ingest: decode each clip for real, check its segments against its duration, and
sample each segment's keyframes (N uniformly spaced frames, as SEED-Bench and VLMEvalKit sample
for image models). Keyframes are stored as images (`source_kind` `keyframe`), so every stage that
reads images (extract, review, publish) reads them with no second path."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from benchfoundry.core import imaging, video
from benchfoundry.core.ids import content_hash, image_id
from benchfoundry.core.imaging import ImageRejected
from benchfoundry.core.reasons import Rejection
from benchfoundry.core.records import ClipRecord, SegmentRecord
from benchfoundry.core.video import KEYFRAME
from benchfoundry.sources.items import RawClip, RawImage, RawSegment, meta_map


@dataclass(frozen=True)
class Keyframe:
    item: RawImage
    image_id: str
    data: bytes
    info: imaging.ImageInfo


@dataclass
class DecodedClip:
    """What one clip yields: its record, its segments with their keyframes, and the segments
    (or the clip) refused."""

    clip: ClipRecord | None
    segments: list[SegmentRecord] = field(default_factory=list)
    keyframes: list[Keyframe] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)


def segment_id(clip_id: str, start: float, end: float, label: str) -> str:
    return content_hash({"clip": clip_id, "start": start, "end": end, "label": label})


def decode_clip(
    clip: RawClip,
    segments: list[RawSegment],
    limits: video.ClipLimits,
    keyframes: int,
) -> DecodedClip:
    """Verify one clip and turn its annotations into segments with keyframes. A refused clip
    refuses its segments too (each names the clip's reason)."""
    try:
        data = clip.read()
        info = video.inspect_clip(data, limits)
    except (video.ClipRejected, ImageRejected) as exc:
        own = Rejection(clip.source, clip.source_kind, exc.reason, exc.detail)
        why = f"its clip {clip.name} was refused ({exc.reason}: {exc.detail})"
        return DecodedClip(
            None,
            rejections=[own]
            + [Rejection(s.source, s.source_kind, "clip_rejected", why) for s in segments],
        )
    clip_id = image_id(data)
    record = ClipRecord(
        clip_id=clip_id,
        source=clip.source,
        source_kind=clip.source_kind,
        name=clip.name,
        duration=info.duration,
        fps=info.fps,
        width=info.width,
        height=info.height,
        codec=info.codec,
        container=info.container,
        frames=info.frames,
        n_bytes=len(data),
        license=clip.license,
        meta=meta_map(clip.meta),
        bytes=data,
    )
    out = DecodedClip(record)
    slack = 1.0 / info.fps  # a segment may end within one frame of the clip's end
    kept: list[tuple[RawSegment, float, float]] = []
    for segment in segments:
        start = segment.start if segment.start is not None else 0.0
        end = segment.end if segment.end is not None else info.duration
        if end > info.duration + slack:
            out.rejections.append(
                Rejection(
                    segment.source,
                    segment.source_kind,
                    "segment_past_end",
                    f"ends at {end:g} s; clip {clip.name} lasts {info.duration:g} s",
                )
            )
            continue
        kept.append((segment, start, min(end, info.duration)))
    kept.sort(key=lambda k: (k[1], k[2], k[0].label))
    times = {(s, e): video.sample_times(s, e, keyframes) for _, s, e in kept}
    wanted = sorted({t for ts in times.values() for t in ts})
    try:
        images = dict(zip(wanted, video.frames_at(data, wanted), strict=True)) if wanted else {}
    except video.ClipRejected as exc:  # decoded once to verify, not again: refuse, never crash
        why = f"its clip {clip.name} was refused ({exc.reason}: {exc.detail})"
        return DecodedClip(
            None,
            rejections=[Rejection(clip.source, clip.source_kind, exc.reason, exc.detail)]
            + [Rejection(s.source, s.source_kind, "clip_rejected", why) for s, _, _ in kept],
        )
    ids: dict[float, str] = {}
    for at, frame in images.items():
        png = video.png_bytes(frame)
        ids[at] = image_id(png)
        meta = {"clip": clip.name, "clip_id": clip_id, "time": f"{at:g}"}
        item = RawImage(
            f"{clip.source}@{at:g}s", KEYFRAME, data=png, license=clip.license, meta=meta
        )
        limits_ = imaging.ImageLimits(min_side=1, max_pixels=limits.max_pixels)
        out.keyframes.append(Keyframe(item, ids[at], png, imaging.inspect(png, limits_)))
    for order, (segment, start, end) in enumerate(kept):
        out.segments.append(
            SegmentRecord(
                segment_id=segment_id(clip_id, start, end, segment.label),
                clip_id=clip_id,
                video=clip.name,
                start=start,
                end=end,
                label=segment.label,
                family=segment.family,
                order=order,
                source=segment.source,
                source_kind=segment.source_kind,
                frames=[ids[t] for t in times[(start, end)]],
                frame_times=times[(start, end)],
                placeholders=list(segment.placeholders),
                noun=segment.noun,
            )
        )
    return out


def clip_jobs(
    clips: list[RawClip], segments: list[RawSegment]
) -> list[tuple[RawClip, list[RawSegment]]]:
    """Each clip with the segments annotated on it, in the sources' order."""
    by_clip: dict[str, list[RawSegment]] = defaultdict(list)
    for segment in segments:
        by_clip[segment.clip_source].append(segment)
    return [(clip, by_clip[clip.source]) for clip in clips]


def decode_clips(
    jobs: list[tuple[RawClip, list[RawSegment]]], limits: video.ClipLimits, keyframes: int
) -> list[DecodedClip]:
    return [decode_clip(clip, segments, limits, keyframes) for clip, segments in jobs]
