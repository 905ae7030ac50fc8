"""What the test server checks of the media parts it receives, as vLLM and SGLang check them:
each content part is `text`, `image_url` or `video_url`; a data URL names its kind
(`data:image/...;base64,` for an image, `data:video/...;base64,` for a clip), its bytes decode
(an image by Pillow, a clip's first frame by PyAV), and a prompt holds no more images or clips
than the server's `limit_mm_per_prompt` allows (vLLM's option of that name). A request that
fails a check is answered 400 with the reason, as those servers answer."""

from __future__ import annotations

import base64
import binascii
import io
from dataclasses import dataclass
from typing import Any

KINDS = {"image_url": "image", "video_url": "video"}


class MediaError(ValueError):
    """A request's media that a vLLM-style server would refuse (answered 400)."""


@dataclass(frozen=True)
class Media:
    """One image or clip as the server decoded it."""

    kind: str  # image | video
    width: int
    height: int
    frames: int  # 1 for an image
    duration: float  # seconds; 0 for an image


def media_of(messages: list[dict[str, Any]], limits: dict[str, int]) -> list[Media]:
    """Every image and clip of a request's messages, checked (`MediaError` says why not)."""
    found: list[Media] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str) or content is None:
            continue
        if not isinstance(content, list):
            raise MediaError("message content must be a string or a list of parts")
        for part in content:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                continue
            if kind not in KINDS:
                raise MediaError(f"unknown content part type {kind!r}")
            url = (part.get(kind) or {}).get("url", "")
            found.append(_decode(KINDS[kind], url))
    for kind in ("image", "video"):
        count = sum(m.kind == kind for m in found)
        if kind in limits and count > limits[kind]:
            raise MediaError(f"At most {limits[kind]} {kind}(s) may be provided in one prompt.")
    return found


def _decode(kind: str, url: str) -> Media:
    head, sep, payload = url.partition(",")
    if not url.startswith("data:") or not sep or not head.endswith(";base64"):
        raise MediaError(f"{kind} part: expected a base64 data URL, got {url[:40]!r}")
    mime = head[len("data:") : -len(";base64")]
    if not mime.startswith(f"{kind}/"):
        raise MediaError(f"{kind} part: a data URL of {mime!r} is not a {kind}")
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise MediaError(f"{kind} part: the base64 payload does not decode") from None
    return _image(data) if kind == "image" else _video(data)


def _image(data: bytes) -> Media:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            return Media("image", image.width, image.height, 1, 0.0)
    except (UnidentifiedImageError, OSError) as exc:
        raise MediaError(f"image part: cannot decode the image ({exc})") from None


def _video(data: bytes) -> Media:
    import av

    try:
        with av.open(io.BytesIO(data)) as container:
            stream = container.streams.video[0]
            frames = sum(1 for _ in container.decode(stream))
            duration = float(container.duration or 0) / 1_000_000
            width, height = stream.codec_context.width, stream.codec_context.height
    except (av.FFmpegError, IndexError, OSError) as exc:
        raise MediaError(f"video part: cannot decode the clip ({exc})") from None
    if frames == 0:
        raise MediaError("video part: the clip has no frames")
    return Media("video", width, height, frames, duration)
