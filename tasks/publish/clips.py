"""The clips of a release: each clip question's stretch (`clip_start` to `clip_end` of its source
clip, as generate decided what the question may show) cut into a file of its own, so a release
never shows a question more than it may: an action prediction's file ends where its shown steps
end, before the step it asks about. A cut is re-encoded (exact to the frame wherever the source's
keyframes lie), decoded in full once written, and named by the sha256 of its bytes as every medium
is; questions on the same stretch share one file. A row then says `video = videos/<sha256>.mp4`,
`video_start = 0` and `video_end` = the file's duration, as a video benchmark's user expects of a
file that is the whole clip to show; the source clip and stretch stay in `clip_id`, `clip_start`,
`clip_end`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchfoundry.core import video
from benchfoundry.core.ids import image_id
from benchfoundry.core.records import ClipRecord
from benchfoundry.storage.atomic import atomic_write_bytes
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.publish.rows import ReleaseRow

Stretch = tuple[str, float, float]  # source clip id, start, end (seconds)
VERIFY = video.ClipLimits(min_side=1, max_pixels=2**62, max_seconds=float("inf"))


@dataclass(frozen=True)
class Cut:
    """A stretch's file in the release (`videos/<sha256>.mp4`) and its duration, or why there is
    none."""

    path: str | None
    duration: float = 0.0
    problem: str | None = None


def stretch_of(row: ReleaseRow) -> Stretch | None:
    if row.clip_id is None or row.clip_start is None or row.clip_end is None:
        return None
    return row.clip_id, row.clip_start, row.clip_end


def cut_clips(run: RunFolder, rows: Sequence[ReleaseRow], folder: Path) -> dict[Stretch, Cut]:
    """Every stretch the rows show, cut from the run's clips into `folder/videos/`; a source clip
    is read once however many stretches it has."""
    by_clip: dict[str, set[Stretch]] = defaultdict(set)
    for row in rows:
        if (stretch := stretch_of(row)) is not None:
            by_clip[stretch[0]].add(stretch)
    cuts: dict[Stretch, Cut] = {}
    if not by_clip:
        return cuts
    for batch in run.table(ClipRecord).batches(["clip_id", "bytes"], batch_size=8):
        for clip_id, data in zip(
            batch.column("clip_id").to_pylist(), batch.column("bytes").to_pylist(), strict=True
        ):
            for stretch in sorted(by_clip.pop(clip_id, ())):
                cuts[stretch] = _cut(data, stretch, folder)
    for clip_id, left in by_clip.items():
        for stretch in left:
            cuts[stretch] = Cut(None, problem=f"clip {clip_id} is not in the run's clips table")
    return cuts


def _cut(data: bytes, stretch: Stretch, folder: Path) -> Cut:
    _, start, end = stretch
    try:
        part = video.cut(data, start, end)
        info = video.inspect_clip(part, VERIFY)
    except video.ClipRejected as exc:
        return Cut(None, problem=f"{exc.reason}: {exc.detail}")
    path = f"videos/{image_id(part)}.mp4"
    if not (folder / path).exists():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(folder / path, part)
    return Cut(path, info.duration)


def with_cuts(rows: Sequence[ReleaseRow], cuts: dict[Stretch, Cut]) -> list[ReleaseRow]:
    """The rows with their stretch's file: `video` names it, `video_start` is 0 and `video_end`
    its duration. A row whose stretch could not be cut names no file (the gate refuses it)."""
    out = []
    for row in rows:
        stretch = stretch_of(row)
        if stretch is None:
            out.append(row)
            continue
        found = cuts.get(stretch, Cut(None, problem="not cut"))
        update = (
            {"video": found.path, "video_start": 0.0, "video_end": found.duration}
            if found.path
            else {"video": None, "video_start": None, "video_end": None}
        )
        out.append(row.model_copy(update=update))
    return out
