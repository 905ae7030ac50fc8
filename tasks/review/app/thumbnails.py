"""Thumbnails for the review pages: an image scaled down to a width (never up), as JPEG, or PNG
where it has transparency; kept in a per-process cache bounded by count and bytes."""

from __future__ import annotations

import io
import threading
from collections import OrderedDict

from PIL import Image, UnidentifiedImageError

from benchfoundry.core.errors import UserError

MIN_WIDTH, MAX_WIDTH = 16, 2048


class ThumbnailError(UserError, ValueError):
    """A thumbnail that cannot be made: a width out of range or bytes that are not an image."""


def parse_width(text: str) -> int:
    """The `w` query parameter as a width in pixels, or `ThumbnailError` saying what it takes."""
    if not text.isdigit() or not MIN_WIDTH <= int(text) <= MAX_WIDTH:
        raise ThumbnailError(
            f"w is a width in pixels from {MIN_WIDTH} to {MAX_WIDTH}, not '{text}'"
        )
    return int(text)


def thumbnail(raw: bytes, width: int) -> tuple[str, bytes]:
    """(media type, bytes) of the image scaled to `width` pixels wide (aspect kept; an image
    already narrower keeps its size)."""
    try:
        with Image.open(io.BytesIO(raw)) as opened:
            opened.seek(0)
            image = opened.convert("RGBA") if _transparent(opened) else opened.convert("RGB")
    except (UnidentifiedImageError, OSError) as exc:
        raise ThumbnailError(f"the stored bytes are not an image Pillow reads: {exc}") from exc
    if image.width > width:
        height = max(1, round(image.height * width / image.width))
        image = image.resize((width, height), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    if image.mode == "RGBA":
        image.save(out, format="PNG", optimize=True)
        return "image/png", out.getvalue()
    image.save(out, format="JPEG", quality=85)
    return "image/jpeg", out.getvalue()


def _transparent(image: Image.Image) -> bool:
    return image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info


class ThumbnailCache:
    """Thumbnails by (image id, width), least recently used dropped first once either bound is
    reached. Image ids are content hashes, so an entry never goes stale."""

    def __init__(self, max_items: int = 2048, max_bytes: int = 64 * 2**20) -> None:
        self.max_items, self.max_bytes = max_items, max_bytes
        self._items: OrderedDict[tuple[str, int], tuple[str, bytes]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[str, int]) -> tuple[str, bytes] | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: tuple[str, int], value: tuple[str, bytes]) -> None:
        with self._lock:
            if key in self._items:
                return
            self._items[key] = value
            self._bytes += len(value[1])
            while self._items and (
                len(self._items) > self.max_items or self._bytes > self.max_bytes
            ):
                _, (_, dropped) = self._items.popitem(last=False)
                self._bytes -= len(dropped)

    def __len__(self) -> int:
        return len(self._items)
