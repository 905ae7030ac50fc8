"""Interleaved messages in VLMEvalKit's form: `[{"type": "text"|"image"|"video", "value": ...}]`.

An image value may be bytes, a path to a file, or an image id of the run (`image_id:<sha256>`
or the bare 64-character hash), resolved through an `ImageStore`. After `normalise`, every image
part holds its bytes and its sha256, which is its image id.

A video part is a clip's bytes (or a path) with the stretch a question is about (`start`, `end`,
seconds) and the `keyframe` that stands for it (an image value). What a model is shown of it is
decided per model by `clip_input`: the clip itself to a model that takes video, N frames
sampled uniformly from the stretch to one that takes images, the keyframe to a fact reader.
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict

from benchfoundry.core.ids import sha256_hex
from benchfoundry.core.imaging import signature
from benchfoundry.core.records import ImageRecord
from benchfoundry.storage.tables import RunFolder

_HASH = re.compile(r"^(?:image_id:)?([0-9a-f]{64})$")
_MIME = {
    "JPEG": "image/jpeg",
    "PNG": "image/png",
    "GIF": "image/gif",
    "WebP": "image/webp",
    "BMP": "image/bmp",
    "TIFF": "image/tiff",
}


class ImageStore(Protocol):
    def get(self, image_id: str) -> bytes: ...


class RunImages:
    """Images of a run folder, looked up by id."""

    def __init__(self, run: RunFolder) -> None:
        self.run = run

    def get(self, image_id: str) -> bytes:
        table = self.run.table(ImageRecord)
        for part in table.parts():
            found = pq.read_table(
                part, columns=["image_id", "bytes"], filters=pc.field("image_id") == image_id
            )
            if found.num_rows:
                return found.column("bytes")[0].as_py()
        raise KeyError(f"image {image_id} is not in run {self.run.root}")


class TextPart(BaseModel):
    model_config = ConfigDict(frozen=True)
    type: Literal["text"] = "text"
    value: str


class ImagePart(BaseModel):
    model_config = ConfigDict(frozen=True)
    type: Literal["image"] = "image"
    data: bytes
    sha256: str

    @property
    def mime(self) -> str:
        return _MIME.get(signature(self.data) or "", "image/png")

    def data_url(self) -> str:
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"


class VideoPart(BaseModel):
    model_config = ConfigDict(frozen=True)
    type: Literal["video"] = "video"
    data: bytes
    sha256: str
    start: float
    end: float
    keyframe: ImagePart

    def data_url(self) -> str:
        return f"data:video/mp4;base64,{base64.b64encode(self.data).decode('ascii')}"


Part = TextPart | ImagePart | VideoPart


def _image(value: Any, images: ImageStore | None) -> ImagePart:
    if isinstance(value, bytes | bytearray):
        data = bytes(value)
    elif isinstance(value, str) and (match := _HASH.match(value)):
        if images is None:
            raise ValueError(f"image id {match.group(1)} given but no image store to resolve it")
        data = images.get(match.group(1))
    elif isinstance(value, str | Path) and Path(value).is_file():
        data = Path(value).read_bytes()
    else:
        shown = repr(value)[:60]
        raise ValueError(f"image part value {shown} is not bytes, an existing file or an image id")
    return ImagePart(data=data, sha256=sha256_hex(data))


def normalise(
    messages: str | Sequence[dict[str, Any] | Part], images: ImageStore | None = None
) -> list[Part]:
    """Parts with images resolved to bytes; a plain string is one text part."""
    if isinstance(messages, str):
        return [TextPart(value=messages)]
    parts: list[Part] = []
    for item in messages:
        if isinstance(item, TextPart | ImagePart | VideoPart):
            parts.append(item)
            continue
        kind = item.get("type")
        if kind == "text":
            parts.append(TextPart(value=str(item["value"])))
        elif kind == "image":
            parts.append(_image(item["value"], images))
        elif kind == "video":
            value = item["value"]
            data = (
                bytes(value) if isinstance(value, bytes | bytearray) else Path(value).read_bytes()
            )
            parts.append(
                VideoPart(
                    data=data,
                    sha256=sha256_hex(data),
                    start=float(item["start"]),
                    end=float(item["end"]),
                    keyframe=_image(item["keyframe"], images),
                )
            )
        else:
            raise ValueError(f"message part type must be 'text', 'image' or 'video', got {kind!r}")
    return parts


@functools.lru_cache(maxsize=256)
def _frames(data: bytes, start: float, end: float, n: int) -> tuple[bytes, ...]:
    from benchfoundry.core import video

    times = video.sample_times(start, end, n)
    return tuple(video.png_bytes(f) for f in video.frames_at(data, times))


@functools.lru_cache(maxsize=64)
def _cut(data: bytes, start: float, end: float) -> bytes:
    from benchfoundry.core import video

    return video.cut(data, start, end)


def clip_frames(part: VideoPart, n: int) -> list[Any]:
    """The clip's stretch as `n` RGB frames (H x W x 3 arrays), for a processor's `videos`."""
    import io

    import numpy as np
    from PIL import Image

    return [
        np.asarray(Image.open(io.BytesIO(f)).convert("RGB"))
        for f in _frames(part.data, part.start, part.end, n)
    ]


def clip_input(parts: Sequence[Part], sees: str, frames: int, takes_video: bool) -> list[Part]:
    """What one model is shown of each clip: the clip (`takes_video`), or `frames` frames
    sampled uniformly from the stretch as images (SEED-Bench's way for image models), or, to a
    model that does not see pixels (a fact reader, a blind baseline), the keyframe."""
    out: list[Part] = []
    for part in parts:
        if not isinstance(part, VideoPart):
            out.append(part)
        elif sees != "pixels":
            out.append(part.keyframe)
        elif takes_video:  # the stretch alone: nothing after `end` reaches the model
            stretch = _cut(part.data, part.start, part.end)
            out.append(
                part.model_copy(
                    update={
                        "data": stretch,
                        "sha256": sha256_hex(stretch),
                        "start": 0.0,
                        "end": round(part.end - part.start, 3),
                    }
                )
            )
        else:
            out += [
                ImagePart(data=f, sha256=sha256_hex(f))
                for f in _frames(part.data, part.start, part.end, frames)
            ]
    return out


def text_of(parts: Sequence[Part]) -> str:
    """The text parts joined, images left out."""
    return "\n".join(p.value for p in parts if isinstance(p, TextPart))


def has_images(parts: Sequence[Part]) -> bool:
    return any(isinstance(p, ImagePart | VideoPart) for p in parts)


def cache_form(parts: Sequence[Part]) -> list[dict[str, str]]:
    """The parts as they enter a cache key: text as is, images by their hash, a clip by its
    hash and stretch."""
    return [
        {"text": p.value}
        if isinstance(p, TextPart)
        else {"video": p.sha256, "from": f"{p.start:g}", "to": f"{p.end:g}"}
        if isinstance(p, VideoPart)
        else {"image": p.sha256}
        for p in parts
    ]
