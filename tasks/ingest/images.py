"""Ingest's images: each decoded and shown as a viewer shows it (`imaging.normalise`), and the
catalog of what a run holds, which decides what a batch adds (exact and near duplicates)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from benchfoundry.core import imaging
from benchfoundry.core.ids import image_id
from benchfoundry.core.reasons import Rejection
from benchfoundry.core.records import ImageRecord, ImageSourceRecord
from benchfoundry.sources.items import RawImage, meta_map
from benchfoundry.storage.tables import RunFolder


@dataclass(frozen=True)
class DecodedImage:
    """One image as a person sees it (`imaging.normalise`): `data` are the bytes to store, `steps`
    what was done to the bytes as given, whose hash is `original_sha256`."""

    item: RawImage
    image_id: str
    data: bytes
    info: imaging.ImageInfo | None
    original_sha256: str = ""
    steps: tuple[str, ...] = ()


def decode_one(
    item: RawImage, limits: imaging.ImageLimits, stored: Mapping[str, str] | None = None
) -> DecodedImage | Rejection:
    """Read, fully decode and normalise one image, or say why not. Bytes whose hash is a key of
    `stored` (the hash of bytes as given -> the stored image's id) were verified and normalised
    when they were stored, so they are hashed but not decoded again (`info` is None)."""
    try:
        data = item.read()
        original = image_id(data)
        if stored and original in stored:
            return DecodedImage(item, stored[original], b"", None, original)
        shown = imaging.normalise(data, limits)
    except imaging.ImageRejected as exc:
        return Rejection(item.source, item.source_kind, exc.reason, exc.detail)
    return DecodedImage(item, image_id(shown.data), shown.data, shown.info, original, shown.steps)


def decode_batch(
    items: list[RawImage], limits: imaging.ImageLimits, stored: Mapping[str, str] | None = None
) -> list[DecodedImage | Rejection]:
    return [decode_one(item, limits, stored) for item in items]


class ImageCatalog:
    """The images a run holds, for deciding what a new batch adds.

    Built once from the stored `images` table, then updated batch by batch, so that batches can be
    stored one after another without re-reading the table: an image whose bytes are already known
    is stored once (each origin still goes to `image_sources`), and a new image within
    `near_distance` perceptual-hash bits of a stored non-duplicate image points at the closest
    one by `duplicate_of` (the smallest image id on a tie).
    """

    def __init__(
        self,
        stored: dict[str, tuple[str, str | None]],
        near_distance: int,
        originals: dict[str, str] | None = None,
    ) -> None:
        self.near_distance = near_distance
        self.stored: set[str] = set(stored)
        # The hash of bytes as given -> the id of the image they were stored as.
        self.originals: dict[str, str] = {i: i for i in stored} | (originals or {})
        self.seen: set[str] = set()
        self.canonical_ids = sorted(i for i, (_, dup) in stored.items() if dup is None)
        self._hashes = np.zeros(max(64, len(self.canonical_ids) * 2), dtype=np.uint64)
        self._hashes[: len(self.canonical_ids)] = imaging.hashes_array(
            [stored[i][0] for i in self.canonical_ids]
        )

    @classmethod
    def from_run(cls, run: RunFolder, near_distance: int) -> ImageCatalog:
        table = run.table(ImageRecord).read(columns=["image_id", "phash", "duplicate_of"])
        ids, hashes, dups = (
            table.column(c).to_pylist() for c in ("image_id", "phash", "duplicate_of")
        )
        origins = run.table(ImageSourceRecord).read(columns=["image_id", "original_sha256"])
        originals = {
            o: i
            for i, o in zip(
                origins.column("image_id").to_pylist(),
                origins.column("original_sha256").to_pylist(),
                strict=True,
            )
            if o
        }
        return cls(
            {i: (h, d) for i, h, d in zip(ids, hashes, dups, strict=True)}, near_distance, originals
        )

    def _add_canonical(self, image_id_: str, phash: str) -> None:
        n = len(self.canonical_ids)
        if n == len(self._hashes):
            self._hashes = np.concatenate([self._hashes, np.zeros_like(self._hashes)])
        self._hashes[n] = np.uint64(int(phash, 16))
        self.canonical_ids.append(image_id_)

    def nearest(self, phash: str) -> tuple[str | None, int]:
        """The closest non-duplicate image and its distance; on a tie, the smallest image id,
        so the answer does not depend on the order images arrived in."""
        n = len(self.canonical_ids)
        if n == 0:
            return None, 65
        distances = np.bitwise_count(self._hashes[:n] ^ np.uint64(int(phash, 16)))
        best = int(distances.min())
        closest = min(self.canonical_ids[i] for i in np.flatnonzero(distances == best))
        return closest, best

    def admit(
        self, decoded: list[DecodedImage | Rejection], link_near: bool = True
    ) -> BatchOutcome:
        """Records for one decoded batch, in order; updates the catalog. With `link_near` off
        (a clip's keyframes, alike by nature) no image is marked a near duplicate."""
        outcome = BatchOutcome()
        for entry in decoded:
            if isinstance(entry, Rejection):
                outcome.rejections.append(entry)
                continue
            item = entry.item
            outcome.id_of_source[item.source] = entry.image_id
            outcome.image_sources.append(
                ImageSourceRecord(
                    image_id=entry.image_id,
                    source=item.source,
                    source_kind=item.source_kind,
                    license=item.license,
                    meta=meta_map(item.meta),
                    original_sha256=entry.original_sha256 or entry.image_id,
                )
            )
            if entry.original_sha256:
                self.originals[entry.original_sha256] = entry.image_id
            if entry.image_id in self.seen:
                outcome.exact_duplicates += 1
                continue
            self.seen.add(entry.image_id)
            if entry.image_id in self.stored:
                outcome.already_stored += 1
                continue
            info = entry.info
            assert info is not None, "only images already stored skip decoding"
            duplicate_of, distance = self.nearest(info.phash) if link_near else (None, 65)
            if duplicate_of is not None and distance <= self.near_distance:
                outcome.near_duplicates += 1
            else:
                duplicate_of, distance = None, None
                self._add_canonical(entry.image_id, info.phash)
            meta = {**item.meta, **({"frames": str(info.frames)} if info.frames > 1 else {})}
            outcome.images.append(
                ImageRecord(
                    image_id=entry.image_id,
                    source=item.source,
                    source_kind=item.source_kind,
                    width=info.width,
                    height=info.height,
                    format=info.format,
                    mode=info.mode,
                    n_bytes=len(entry.data),
                    phash=info.phash,
                    duplicate_of=duplicate_of,
                    duplicate_distance=distance,
                    license=item.license,
                    meta=meta_map(meta),
                    bytes=entry.data,
                    original_sha256=entry.original_sha256 or entry.image_id,
                    normalised=list(entry.steps),
                )
            )
        return outcome


@dataclass
class BatchOutcome:
    """The records one batch of images yields, and how many of each kind."""

    images: list[ImageRecord] = field(default_factory=list)
    image_sources: list[ImageSourceRecord] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    id_of_source: dict[str, str] = field(default_factory=dict)
    exact_duplicates: int = 0
    near_duplicates: int = 0
    already_stored: int = 0
