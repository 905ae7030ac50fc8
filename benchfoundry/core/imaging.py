"""Decode and verify image bytes for real, describe them (size, format, perceptual hash), and
turn them into the picture a person sees (`normalise`).

Every refusal is an `ImageRejected` with a reason code from `REASONS` and a detail a user can act
on, so callers turn it into a quarantine row instead of losing the input.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass

import imagehash
import numpy as np
from PIL import Image, ImageCms, ImageOps, UnidentifiedImageError

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
    return str(imagehash.phash(image if image.mode == "RGB" else image.convert("RGB")))


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


# EXIF orientation values (TIFF tag 274) and what a viewer does to show the picture upright.
ORIENTATIONS: dict[int, str] = {
    2: "mirrored left to right",
    3: "rotated 180 degrees",
    4: "mirrored top to bottom",
    5: "mirrored along the main diagonal",
    6: "rotated 90 degrees clockwise",
    7: "mirrored along the other diagonal",
    8: "rotated 90 degrees anticlockwise",
}
_EXIF_ORIENTATION = 0x0112
_ALPHA_MODES = frozenset({"RGBA", "RGBa", "LA", "La", "PA"})
_WIDE_MODES = frozenset({"I;16", "I;16B", "I;16L", "I;16N", "I", "F"})
_SRGB = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB"))
_OPAQUE = "opaque alpha channel dropped"
# Backgrounds behind transparent pixels: white, as the review desk and a page show them.
BACKGROUND = (255, 255, 255)


@dataclass(frozen=True)
class Normalised:
    """An image as a person sees it: `data` are the bytes to store (the given bytes where nothing
    had to change, else a PNG of the upright sRGB pixels), `steps` says what was done, in order
    (empty when the given bytes are stored as they are)."""

    data: bytes
    info: ImageInfo
    steps: tuple[str, ...]
    original_format: str


def _orientation(image: Image.Image) -> int:
    try:
        value = image.getexif().get(_EXIF_ORIENTATION)
    except Exception:  # a broken EXIF block is read as no orientation, as viewers do
        return 1
    return value if isinstance(value, int) and value in ORIENTATIONS else 1


def _profile_steps(image: Image.Image) -> tuple[Image.Image, list[str]]:
    """The pixels moved from an embedded colour profile to sRGB where the profile is not sRGB
    already and Pillow's LittleCMS can apply it; otherwise the pixels as they are, saying so."""
    icc = image.info.get("icc_profile")
    if not icc:
        return image, []
    try:
        profile = ImageCms.ImageCmsProfile(io.BytesIO(icc))
        name = (ImageCms.getProfileDescription(profile) or "").strip()
    except (ImageCms.PyCMSError, OSError, TypeError, ValueError) as exc:
        return image, [f"embedded colour profile unreadable ({exc}); read as sRGB"]
    if "srgb" in name.lower().replace(" ", ""):
        return image, []
    space = profile.profile.xcolor_space.strip()
    base = {"RGBA": "RGB", "LA": "L"}.get(image.mode, image.mode)
    if (space, base) not in {("RGB", "RGB"), ("CMYK", "CMYK"), ("GRAY", "L")}:
        return image, [f"embedded colour profile '{name}' ({space}) does not fit {image.mode}"]
    alpha = image.getchannel("A") if image.mode in ("RGBA", "LA") else None
    try:
        converted = ImageCms.profileToProfile(image.convert(base), profile, _SRGB, outputMode="RGB")
    except ImageCms.PyCMSError as exc:
        return image, [f"embedded colour profile '{name}' could not be applied ({exc})"]
    assert converted is not None, "profileToProfile returns an image unless told in place"
    if alpha is not None:
        converted.putalpha(alpha)
    return converted, [f"colour profile '{name}' converted to sRGB"]


def _to_eight_bit(image: Image.Image) -> tuple[Image.Image, str]:
    """16-bit and 32-bit greys as 8 bits: integers by their full 16-bit range (as viewers show a
    16-bit PNG), floats stretched from their lowest to their highest value."""
    array = np.asarray(image, dtype=np.float64)
    if image.mode == "F":
        low, high = float(array.min()), float(array.max())
        scaled = (array - low) / (high - low) * 255 if high > low else np.zeros_like(array)
        how = "floating-point grey stretched to 8 bits"
    else:
        scaled = array / 257 if float(array.max(initial=0)) > 255 else array
        how = f"{image.mode} grey scaled to 8 bits"
    return Image.fromarray(np.clip(np.rint(scaled), 0, 255).astype(np.uint8)), how


def _composite(image: Image.Image) -> tuple[Image.Image, str]:
    rgba = image.convert("RGBA")
    if rgba.getchannel("A").getextrema()[0] == 255:
        return rgba.convert("RGB"), _OPAQUE
    background = Image.new("RGBA", rgba.size, (*BACKGROUND, 255))
    return Image.alpha_composite(background, rgba).convert("RGB"), "transparency painted on white"


def normalise(data: bytes, limits: ImageLimits = ImageLimits()) -> Normalised:
    """The picture a viewer shows for `data`, or `ImageRejected`: the EXIF orientation applied
    (all eight values), an embedded colour profile converted to sRGB, transparency painted on
    white, CMYK and 16-bit or float pixels made 8-bit RGB. Bytes that need none of this (RGB,
    grey, palette or bilevel pixels read the same by every later step) are kept as given, so their
    image id stays the hash of the file; any other image is stored as a PNG of what a person sees.
    """
    image = decode(data, limits)
    original_format = image.format or ""
    steps: list[str] = []
    try:
        frames = int(getattr(image, "n_frames", 1))
        orientation = _orientation(image)
        if orientation != 1:
            image = ImageOps.exif_transpose(image)
            steps.append(f"EXIF orientation {orientation} applied ({ORIENTATIONS[orientation]})")
        if image.mode in _WIDE_MODES:
            image, how = _to_eight_bit(image)
            steps.append(how)
        image, profile_steps = _profile_steps(image)
        steps += profile_steps
        if image.mode == "P" and "transparency" in image.info:
            image = image.convert("RGBA")
        if image.mode in _ALPHA_MODES:
            image, how = _composite(image)
            steps.append(how)
        if image.mode not in ("RGB", "L", "P", "1"):
            steps.append(f"{image.mode} converted to RGB")
            image = image.convert("RGB")
        if all(step == _OPAQUE for step in steps):  # every later step reads these pixels alike
            kept = decode(data, limits)
            info = ImageInfo(
                kept.width, kept.height, original_format, kept.mode, frames, perceptual_hash(image)
            )
            return Normalised(data, info, (), original_format)
        out = io.BytesIO()
        image.save(out, format="PNG")
        steps.append(f"stored as PNG (given as {original_format})")
        info = ImageInfo(
            image.width, image.height, "PNG", image.mode, frames, perceptual_hash(image)
        )
    except ImageRejected:
        raise
    except Exception as exc:  # the decoder's own failures on broken data, whatever their type
        raise ImageRejected("corrupt_image", f"{type(exc).__name__}: {exc}") from None
    return Normalised(out.getvalue(), info, tuple(steps), original_format)


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
