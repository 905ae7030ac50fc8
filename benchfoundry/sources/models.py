"""The sources a build reads images, clips and seed questions from, as the spec names them: a
folder, a VLMEvalKit TSV, a Parquet file in MMStar's layout, photos that installed packages ship,
or a folder of video clips with their action annotations.
Ingest stores them; evaluation reads the same table formats as datasets."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator

from benchfoundry.core.locations import Location
from benchfoundry.core.options import SpecModel
from benchfoundry.core.packaged import PACKAGES


class FolderSource(SpecModel):
    """Every image file under a folder, recursively."""

    kind: Literal["folder"] = "folder"
    path: Location
    license: str | None = None
    meta: dict[str, str] = Field(default_factory=dict)


class TsvSource(SpecModel):
    """A VLMEvalKit-style multiple-choice TSV: its rows become images and seed questions."""

    kind: Literal["tsv"] = "tsv"
    path: Location
    image_root: Location | None = Field(
        default=None,
        description="folder that `image_path` values are read from, and may not lead out of "
        "(default: the file's folder)",
    )
    license: str | None = None
    meta: dict[str, str] = Field(default_factory=dict)


class ParquetSource(SpecModel):
    """A Parquet file with an image column and question/options/answer columns (MMStar layout)."""

    kind: Literal["parquet"] = "parquet"
    path: Location
    image_column: str = "image"
    image_root: Location | None = Field(
        default=None,
        description="folder that image paths are read from, and may not lead out of (default: "
        "the file's folder)",
    )
    license: str | None = None
    meta: dict[str, str] = Field(default_factory=dict)


class PackagedSource(SpecModel):
    """Photos that installed Python packages ship (no download)."""

    kind: Literal["packaged"] = "packaged"
    packages: list[str] = Field(default_factory=lambda: list(PACKAGES))

    @field_validator("packages")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        unknown = [p for p in value if p not in PACKAGES]
        if unknown:
            raise ValueError(f"unknown package(s) {unknown}; known: {', '.join(PACKAGES)}")
        return value


class VideoSource(SpecModel):
    """A folder of clips and a file of their action annotations (SEED-Bench's temporal part):
    `ssv2` is Something-Something-v2's JSON list (`id`, `label`, `template`, `placeholders`;
    one clip `<id>.webm` or `.mp4` each); `segments` a CSV `video,start,end,label` (seconds,
    several ordered segments per video, Breakfast's form; `verb` and `noun` columns read when
    there); `epic_kitchens` EPIC-KITCHENS-100's CSV (`video_id`, `start_timestamp`,
    `stop_timestamp`, `narration`, `verb`, `noun`, ...)."""

    kind: Literal["videos"] = "videos"
    path: Location = Field(description="folder the clips are in (searched recursively)")
    annotations: Location = Field(description="the annotation file (JSON or CSV, per `format`)")
    format: Literal["ssv2", "segments", "epic_kitchens"] = "segments"
    license: str | None = None
    meta: dict[str, str] = Field(default_factory=dict)


AnySource = FolderSource | TsvSource | ParquetSource | PackagedSource | VideoSource
Source = Annotated[AnySource, Field(discriminator="kind")]


def source_problem(source: AnySource) -> str | None:
    """What stops ingest from reading a local source (it is missing, unreadable, or not the
    kind the spec names), or None; a source at a URL is checked when it is read."""
    import importlib.metadata

    from benchfoundry.core.locations import is_url

    if isinstance(source, PackagedSource):
        missing = []
        for package in source.packages:
            try:
                importlib.metadata.version(package)
            except importlib.metadata.PackageNotFoundError:
                missing.append(package)
        return f"package(s) not installed: {', '.join(missing)}" if missing else None
    if isinstance(source, VideoSource) and not is_url(source.annotations):
        annotations = Path(source.annotations)
        if not annotations.is_file():
            return f"no annotation file at {annotations} (a `videos` source's `annotations`)"
    if is_url(source.path):
        return None
    path = Path(source.path)
    folder = isinstance(source, FolderSource | VideoSource)
    wanted = "folder" if folder else f"{source.kind} file"
    if not path.exists():
        return f"no {wanted} at {path}"
    if folder != path.is_dir():
        other = "a folder" if path.is_dir() else "a file"
        return f"{path} is {other}, but a `{source.kind}` source names a {wanted}"
    if not os.access(path, os.R_OK):
        return f"{path} cannot be read (permissions)"
    if isinstance(source, FolderSource):
        return _no_images(path)
    return None


def _no_images(folder: Path) -> str | None:
    """Why a folder source would give no image at all (it is empty, or holds no file with an
    image's extension outside hidden folders), naming a few of what it holds; None once one
    image file is found."""
    from benchfoundry.core.imaging import IMAGE_SUFFIXES

    others: list[str] = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if Path(name).suffix.lower() in IMAGE_SUFFIXES and not name.startswith("."):
                return None
            others.append(str((Path(root) / name).relative_to(folder)))
    if not others:
        return f"{folder} is empty: a `folder` source needs image files in it"
    shown = ", ".join(sorted(others)[:5]) + (
        f" and {len(others) - 5} more" if len(others) > 5 else ""
    )
    return (
        f"{folder} holds no image file ({len(others)} other files: {shown}); a `folder` source "
        f"reads {', '.join(sorted(IMAGE_SUFFIXES))}"
    )


def describe_source(source: AnySource) -> str:
    """A one-line description of a source, for summaries and the run manifest."""
    if isinstance(source, PackagedSource):
        return f"packaged:{','.join(source.packages)}"
    # A path whose bytes are not UTF-8 is shown with \xNN escapes (it must fit a text column).
    return f"{source.kind}:{os.fsencode(source.path).decode('utf-8', 'backslashreplace')}"
