"""What ingestion reads from a source before decoding: raw images, seed questions, rejections."""

from __future__ import annotations

import base64
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from benchfoundry.core.errors import UserError
from benchfoundry.core.imaging import REASONS as IMAGE_REASONS
from benchfoundry.core.imaging import ImageRejected
from benchfoundry.core.reasons import Rejection, register
from benchfoundry.core.video import REASONS as VIDEO_REASONS

# Every reason ingestion can give for refusing something, with what it means.
REASONS: dict[str, str] = register(
    "ingest",
    {
        **IMAGE_REASONS,
        "unreadable_file": "the file cannot be read (permissions, broken link, I/O error)",
        "unsupported_extension": "a file in an image folder whose extension is not an image format",
        "unreadable_folder": "a folder that cannot be listed (permissions, I/O error)",
        "hidden_skipped": "a hidden file or folder (name starting with a dot), not looked into",
        "symlink_loop": "a linked folder that leads to a folder already walked (a loop, or a second link)",
        "multiple_images": "a row with several images; a question here has one image",
        "malformed_row": "a table row with more or fewer fields than the header",
        "non_utf8": "a text field holds bytes that are not UTF-8",
        "missing_index": "a row without a value in the index column",
        "duplicate_index": "a row whose index an earlier row of the same source already used",
        "missing_image": "a row with neither image data nor an image path",
        "bad_base64": "a row's image field is not valid base64",
        "bad_image_reference": "a row's image refers to an index that holds no image",
        "empty_question": "a row whose question is empty",
        "too_few_options": "a row with fewer than two options",
        "too_many_options": "a row with more options than the ten letters A..J that a question may have",
        "control_characters": "a question, hint or option holds control characters (NUL and other C0 characters but tab and newline)",
        "no_rows": "a table source with a header and no rows: nothing in it to ingest",
        "path_outside_root": "an image path that leads outside the source's folder (or the image_root the spec allows)",
        "bad_image_value": "a row's image value is of a type that holds no image (a number, a boolean...)",
        "option_gap": "a row whose options skip a letter (A and C filled, B empty)",
        "duplicate_options": "a row with two options of the same text",
        "missing_answer": "a row without an answer letter",
        "answer_not_in_options": "a row whose answer letter is not one of its filled options",
        "duplicate_question": "a row with the same image, question and options as an earlier row",
        "image_rejected": "a question whose image was refused (see that image's own quarantine row)",
        **VIDEO_REASONS,
        "missing_clip": "an annotation names a clip that is not in the source's folder",
        "unannotated_clip": "a clip in a `videos` folder that no annotation names (not stored)",
        "empty_label": "an annotated segment whose action label is empty",
        "bad_segment": "a segment whose start is not before its end, or a time that is not a number",
        "segment_past_end": "a segment that ends after its clip does",
        "clip_rejected": "a segment whose clip was refused (see that clip's own quarantine row)",
        "malformed_annotation": "an annotation entry without the fields its format needs",
    },
)


def read_file(path: Path) -> bytes:
    """A source file's bytes, or `ImageRejected('unreadable_file')` saying why not (a pipe, socket
    or device is refused before it is opened: reading one would block)."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise ImageRejected("unreadable_file", "not a regular file (a pipe, socket or device)")
        return path.read_bytes()
    except OSError as exc:
        raise ImageRejected(
            "unreadable_file", f"{type(exc).__name__}: {exc.strerror or exc}"
        ) from None


@dataclass(frozen=True)
class RawImage:
    """An image as a source gives it: bytes in hand, or a file to read when decoding."""

    source: str
    source_kind: str
    data: bytes | None = None
    path: Path | None = None
    license: str | None = None
    meta: dict[str, str] = field(default_factory=dict)

    def read(self) -> bytes:
        if self.data is not None:
            return self.data
        assert self.path is not None, "a RawImage holds bytes or a path"
        return read_file(self.path)


@dataclass(frozen=True)
class SeedQuestion:
    """A multiple-choice question that came with an existing benchmark's row."""

    source: str
    source_kind: str
    image_source: str
    question: str
    hint: str | None
    options: list[str]
    answer: str
    category: str | None
    l2_category: str | None
    split: str | None
    meta: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RawClip:
    """A video clip as a source gives it: a file to read when decoding. `name` is its path
    relative to the source's folder (how annotations and releases name it)."""

    source: str
    source_kind: str
    path: Path
    name: str
    license: str | None = None
    meta: dict[str, str] = field(default_factory=dict)

    def read(self) -> bytes:
        return read_file(self.path)


@dataclass(frozen=True)
class RawSegment:
    """One annotated stretch of a clip: `start`/`end` in seconds (None: the whole clip), its
    action `label`, and its `family` (SSv2's template, EPIC's verb) when the annotation has one,
    with the label's other parts: SSv2's `placeholders`, EPIC's `noun`."""

    source: str  # the annotation row, for a person: `labels.json#id=7`, `segments.csv#line=3`
    source_kind: str  # the annotation format
    clip_source: str  # the RawClip's source
    video: str  # the clip's name
    start: float | None
    end: float | None
    label: str
    family: str | None = None
    placeholders: tuple[str, ...] = ()
    noun: str | None = None


@dataclass
class SourceItems:
    """Everything one source yielded."""

    images: list[RawImage] = field(default_factory=list)
    seeds: list[SeedQuestion] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    clips: list[RawClip] = field(default_factory=list)
    segments: list[RawSegment] = field(default_factory=list)

    def extend(self, other: SourceItems) -> None:
        self.images.extend(other.images)
        self.seeds.extend(other.seeds)
        self.rejections.extend(other.rejections)
        self.warnings.extend(other.warnings)
        self.clips.extend(other.clips)
        self.segments.extend(other.segments)


class SourceFormatError(UserError, ValueError):
    """A source that cannot be read at all (a missing required column, an unreadable file)."""


def path_text(path: str | os.PathLike[str]) -> str:
    """A file name as text that any UTF-8 column can hold: bytes that are not UTF-8 (which Python
    keeps as surrogates) are written as `\\xNN`. Other names are unchanged."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def path_bytes(path: str | os.PathLike[str]) -> str | None:
    """The name's raw bytes as base64 when `path_text` had to escape them (else None), so the
    exact name is kept beside its readable form."""
    raw = os.fsencode(path)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return base64.b64encode(raw).decode("ascii")
    return None


def meta_map(meta: dict[str, str]) -> dict[str, str]:
    """Provenance metadata for a map column: text keys and values, in key order."""
    return {str(k): str(v) for k, v in sorted(meta.items())}
