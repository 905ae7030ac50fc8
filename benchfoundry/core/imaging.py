"""Decode and verify image bytes for real, and describe them (size, format, perceptual hash).

Every refusal is an `ImageRejected` with a reason code from `REASONS` and a detail a user can act
on, so callers turn it into a quarantine row instead of losing the input.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass

import imagehash
import numpy as np
from PIL import Image, UnidentifiedImageError

# The formats ingestion accepts, as Pillow names them.
ACCEPTED_FORMATS = frozenset({"JPEG", "PNG", "WEBP", "BMP", "GIF", "TIFF", "MPO"})
IMAGE_SUFFIXES = frozenset(
    {".jpg", ".jpeg", ".jpe", ".png", ".webp", ".bmp", ".gif", ".tif", ".tiff"}
)

# Reason codes for refused images, with what a user can do about each.
REASONS: dict[str, str] = {
    "empty_file": "the file or field holds zero bytes",
    "not_an_image": "the bytes are not an image format Pillow recognises",
    "unsupported_format": "an image, but not a format (or variant) that can be decoded here",
    "too_many_pixels": "width x height is above the pixel limit (decompression-bomb guard)",
    "too_small": "the shorter side is below the minimum size",
    "truncated_image": "the image data ends early",
    "corrupt_image": "the image data cannot be decoded",
}


class ImageRejected(Exception):
    """An image that ingestion refuses, with a reason code and a readable detail."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class ImageLimits:
    """Size limits applied to every image."""

    min_side: int = 32
    max_pixels: int = 50_000_000


@dataclass(frozen=True)
class ImageInfo:
    """What verification learned about an image."""

    width: int
    height: int
    format: str
    mode: str
    frames: int
    phash: str


_SIGNATURES = (
    (b"\xff\xd8\xff", "JPEG"),
    (b"\x89PNG\r\n\x1a\n", "PNG"),
    (b"GIF8", "GIF"),
    (b"BM", "BMP"),
    (b"II*\x00", "TIFF"),
    (b"MM\x00*", "TIFF"),
)


def signature(data: bytes) -> str | None:
    """The image format that the first bytes announce, if any."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WebP"
    return next((name for magic, name in _SIGNATURES if data.startswith(magic)), None)


def _open(data: bytes, limits: ImageLimits) -> Image.Image:
    if not data:
        raise ImageRejected("empty_file", "zero bytes")
    # Our own pixel limit is checked below from the header; Pillow's bomb guard must not be
    # stricter than it, or a configured larger limit could not be used.
    if Image.MAX_IMAGE_PIXELS is not None and limits.max_pixels > Image.MAX_IMAGE_PIXELS:
        Image.MAX_IMAGE_PIXELS = limits.max_pixels
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as exc:
        raise ImageRejected("too_many_pixels", str(exc)) from None
    except UnidentifiedImageError:
        kind = signature(data)
        if kind:
            raise ImageRejected(
                "unsupported_format", f"a {kind} file in a variant Pillow cannot decode"
            ) from None
        head = data[:8].hex(" ")
        raise ImageRejected("not_an_image", f"unrecognised content (first bytes: {head})") from None
    except Exception as exc:  # the decoder's own failures on broken data, whatever their type
        raise ImageRejected(
            "corrupt_image", f"header cannot be read: {type(exc).__name__}: {exc}"
        ) from None
    if image.format not in ACCEPTED_FORMATS:
        raise ImageRejected("unsupported_format", f"format {image.format}")
    width, height = image.size
    if width * height > limits.max_pixels:
        raise ImageRejected(
            "too_many_pixels",
            f"{width}x{height} = {width * height:,} pixels, limit {limits.max_pixels:,}",
        )
    if min(width, height) < limits.min_side:
        raise ImageRejected(
            "too_small", f"{width}x{height}, shorter side below {limits.min_side} pixels"
        )
    return image


def decode(data: bytes, limits: ImageLimits = ImageLimits()) -> Image.Image:
    """Decode the image (the first frame of an animation) fully, or raise `ImageRejected`."""
    image = _open(data, limits)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image.load()
    except OSError as exc:
        reason = "truncated_image" if "truncated" in str(exc).lower() else "corrupt_image"
        raise ImageRejected(reason, str(exc)) from None
    except Exception as exc:  # the decoder's own failures on broken data, whatever their type
        raise ImageRejected("corrupt_image", f"{type(exc).__name__}: {exc}") from None
    return image


def perceptual_hash(image: Image.Image) -> str:
    """64-bit DCT perceptual hash as 16 hex characters (imagehash.phash)."""
    return str(imagehash.phash(image.convert("RGB")))


def inspect(data: bytes, limits: ImageLimits = ImageLimits()) -> ImageInfo:
    """Verify `data` by decoding it and return its description, or raise `ImageRejected`.
    Any failure of the decoder on broken data (Pillow raises many kinds) is `corrupt_image`."""
    image = decode(data, limits)
    try:
        frames = int(getattr(image, "n_frames", 1))  # reads the later frames' headers
        phash = perceptual_hash(image)
    except Exception as exc:  # the decoder's own failures on broken data, whatever their type
        raise ImageRejected("corrupt_image", f"{type(exc).__name__}: {exc}") from None
    return ImageInfo(image.width, image.height, image.format or "", image.mode, frames, phash)


def hamming(a: str, b: str) -> int:
    """Bit distance between two hex perceptual hashes."""
    return int(np.bitwise_count(np.uint64(int(a, 16)) ^ np.uint64(int(b, 16))))


def nearest(phash: str, others: np.ndarray) -> tuple[int, int]:
    """Index and distance of the closest hash in `others` (uint64 array); (-1, 65) if empty."""
    if others.size == 0:
        return -1, 65
    distances = np.bitwise_count(others ^ np.uint64(int(phash, 16)))
    index = int(np.argmin(distances))
    return index, int(distances[index])


def hashes_array(hashes: list[str]) -> np.ndarray:
    """Hex hashes as a uint64 array for `nearest`."""
    return np.array([int(h, 16) for h in hashes], dtype=np.uint64)
