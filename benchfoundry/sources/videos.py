"""Video sources: a folder of clips and the file that annotates their actions, in one of three
forms (Something-Something-v2's JSON list, a segments CSV, EPIC-KITCHENS-100's CSV).

Every annotation becomes a segment or a rejection with its reason (empty label, bad times, a clip
that is not there), and every clip in the folder is either named by an annotation or recorded as
unannotated. Decoding, and the checks that need a clip's duration, happen at ingest.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from benchfoundry.core.reasons import Rejection
from benchfoundry.core.video import VIDEO_SUFFIXES
from benchfoundry.sources.items import (
    RawClip,
    RawSegment,
    SourceFormatError,
    SourceItems,
    path_text,
)
from benchfoundry.sources.models import VideoSource

_TIMESTAMP = re.compile(r"^(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)$")


def _seconds(value: str) -> float:
    """Seconds from `12.5` or a timestamp `HH:MM:SS.ff` / `MM:SS.ff` (EPIC-KITCHENS)."""
    text = value.strip()
    if match := _TIMESTAMP.match(text):
        hours, minutes, seconds = match.groups()
        return int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)
    number = float(text)  # ValueError for anything else
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError(f"{value!r} is not a finite number")
    return number


def _clips(root: Path) -> dict[str, Path]:
    """Every video file under the folder, by its relative name."""
    if not root.is_dir():
        raise SourceFormatError(f"videos source {root} does not exist or is not a folder")
    return {
        p.relative_to(root).as_posix(): p
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.suffix.lower() in VIDEO_SUFFIXES and not p.name.startswith(".")
    }


def _find(clips: dict[str, Path], video: str) -> str | None:
    """The clip an annotation names: its relative name, or a file whose stem is the name."""
    if video in clips:
        return video
    stem = Path(video).stem if Path(video).suffix.lower() in VIDEO_SUFFIXES else video
    matches = sorted(n for n in clips if Path(n).stem == stem)
    return matches[0] if matches else None


Row = tuple[str, dict[str, str], tuple[str, ...]]  # reference, fields, SSv2's placeholders


def _ssv2_rows(path: Path) -> list[Row]:
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SourceFormatError(f"annotation file {path} is not readable JSON: {exc}") from None
    if not isinstance(entries, list):
        raise SourceFormatError(f"annotation file {path} is not a JSON list (SSv2's labels form)")
    rows: list[Row] = []
    for n, entry in enumerate(entries):
        if not isinstance(entry, dict) or "id" not in entry:
            rows.append((f"{path}#entry={n}", {}, ()))
            continue
        template = str(entry.get("template") or "")  # its slots kept: `Moving [something] up`
        placeholders = entry.get("placeholders")
        if not isinstance(placeholders, list) or not all(isinstance(p, str) for p in placeholders):
            placeholders = []  # the label without its parts: still a label
        rows.append(
            (
                f"{path}#id={entry['id']}",
                {
                    "video": str(entry["id"]),
                    "label": str(entry.get("label") or "").strip(),
                    "family": template,
                },
                tuple(p.strip() for p in placeholders),
            )
        )
    return rows


def _csv_rows(
    path: Path, columns: dict[str, str], optional: dict[str, str] | None = None
) -> list[Row]:
    """Rows of a CSV with the named columns (ours -> the file's) and those of the `optional`
    ones it has, or one error naming a missing column."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle)
            header = reader.fieldnames or []
            missing = [theirs for theirs in columns.values() if theirs not in header]
            if missing:
                raise SourceFormatError(
                    f"annotation file {path} has no column(s) {', '.join(missing)} "
                    f"(it has {', '.join(header) or 'no header'})"
                )
            wanted = columns | {o: t for o, t in (optional or {}).items() if t in header}
            return [
                (
                    f"{path}#line={reader.line_num}",
                    {ours: (row.get(theirs) or "").strip() for ours, theirs in wanted.items()},
                    (),
                )
                for row in reader
            ]
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceFormatError(f"annotation file {path} cannot be read: {exc}") from None


def annotation_rows(source: VideoSource) -> list[Row]:
    """(row reference, fields, placeholders) for each annotation: `video`, `label`, and as the
    format has them `start`, `end`, `family` (SSv2's template, a verb) and `noun`, with SSv2's
    placeholders. An entry missing its fields has empty ones."""
    path = Path(source.annotations)
    if source.format == "ssv2":
        return _ssv2_rows(path)
    if source.format == "segments":  # a verb and a noun, when the file has them (EPIC's columns)
        return _csv_rows(
            path,
            {"video": "video", "start": "start", "end": "end", "label": "label"},
            {"family": "verb", "noun": "noun"},
        )
    return _csv_rows(
        path,
        {
            "video": "video_id",
            "start": "start_timestamp",
            "end": "stop_timestamp",
            "label": "narration",
            "family": "verb",
        },
        {"noun": "noun"},
    )


def read_videos(source: VideoSource) -> SourceItems:
    """The clips the annotations name and one segment per valid annotation; a rejection for
    every annotation that cannot be one and for every clip no annotation names."""
    root = Path(source.path)
    clips = _clips(root)
    items = SourceItems()
    named: dict[str, RawClip] = {}
    kind = f"videos:{source.format}"

    def refuse(ref: str, reason: str, detail: str) -> None:
        items.rejections.append(Rejection(ref, kind, reason, detail))

    for ref, row, placeholders in annotation_rows(source):
        if not row.get("video"):
            refuse(ref, "malformed_annotation", f"no video named ({source.format} form)")
            continue
        if not row.get("label"):
            refuse(ref, "empty_label", f"video {row['video']}: the label is empty")
            continue
        start = end = None
        if source.format != "ssv2":
            try:
                start, end = _seconds(row["start"]), _seconds(row["end"])
            except ValueError:
                refuse(ref, "bad_segment", f"times {row['start']!r}..{row['end']!r} are not times")
                continue
            if start < 0 or start >= end:
                refuse(ref, "bad_segment", f"start {start:g} s is not before end {end:g} s")
                continue
        name = _find(clips, row["video"])
        if name is None:
            refuse(ref, "missing_clip", f"no clip {row['video']} under {path_text(root)}")
            continue
        if name not in named:
            named[name] = RawClip(
                path_text(clips[name]),
                kind,
                clips[name],
                path_text(name),
                source.license,
                {**source.meta, "file": path_text(name)},
            )
        items.segments.append(
            RawSegment(
                ref,
                kind,
                named[name].source,
                named[name].name,
                start,
                end,
                row["label"],
                row.get("family") or None,
                placeholders,
                row.get("noun") or None,
            )
        )
    items.clips = list(named.values())
    for name in sorted(set(clips) - set(named)):
        refuse(path_text(clips[name]), "unannotated_clip", "no annotation names this clip")
    return items
