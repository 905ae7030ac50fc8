"""The ingest stage: read sources, decode every image for real, store each image once, link
near duplicates, turn benchmark rows into seed candidates, and quarantine the rest with reasons.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from benchfoundry.core import imaging, video
from benchfoundry.core.batches import INLINE, Mapper
from benchfoundry.core.errors import UserError
from benchfoundry.core.ids import image_id, question_id
from benchfoundry.core.locations import is_url
from benchfoundry.core.reasons import Rejection
from benchfoundry.core.records import (
    CandidateRecord,
    ClipRecord,
    ImageRecord,
    ImageSourceRecord,
    QuarantineRecord,
    SegmentRecord,
)
from benchfoundry.sources.files import read_folder, read_packaged
from benchfoundry.sources.items import (
    RawImage,
    SeedQuestion,
    SourceFormatError,
    SourceItems,
    meta_map,
)
from benchfoundry.sources.models import (
    FolderSource,
    PackagedSource,
    ParquetSource,
    Source,
    TsvSource,
    VideoSource,
    describe_source,
)
from benchfoundry.sources.tables import read_parquet, read_tsv
from benchfoundry.sources.videos import read_videos
from benchfoundry.storage.mirror import mirror
from benchfoundry.storage.objects import StoreError
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.ingest.clips import DecodedClip, clip_jobs, decode_clips
from benchfoundry.tasks.ingest.options import IngestOptions
from benchfoundry.tasks.ingest.summary import IngestSummary

if TYPE_CHECKING:  # the stage contract's type; stages import nothing above them
    from benchfoundry.pipeline.registry import StageRun


def read_source(source: Source) -> SourceItems:
    """Everything one source yields, before decoding. A source at a URL (s3://, gs://...) is
    read from a copy in the working cache, and every row names it by its URL."""
    named = {f: getattr(source, f, None) for f in ("path", "image_root", "annotations")}
    urls = {f: v for f, v in named.items() if is_url(v)}
    if not urls:
        return _read_local(source)
    try:
        local = {f: mirror(v) for f, v in urls.items()}
    except StoreError as exc:
        raise SourceFormatError(f"source {describe_source(source)}: {exc}") from None
    items = _read_local(source.model_copy(update=local))
    prefixes = [(str(local[f]), str(urls[f]).rstrip("/")) for f in urls]
    return _renamed(items, prefixes)


def _renamed(items: SourceItems, prefixes: list[tuple[str, str]]) -> SourceItems:
    """The items with the working copy's paths given back as the URLs they came from."""

    def back(text: str) -> str:
        for local, url in prefixes:
            if text == local or text.startswith((local + "/", local + "#")):
                return url + text[len(local) :]
        return text

    return SourceItems(
        images=[replace(i, source=back(i.source)) for i in items.images],
        seeds=[
            replace(s, source=back(s.source), image_source=back(s.image_source))
            for s in items.seeds
        ],
        rejections=[replace(r, source=back(r.source)) for r in items.rejections],
        warnings=list(items.warnings),
        clips=[replace(c, source=back(c.source)) for c in items.clips],
        segments=[
            replace(s, source=back(s.source), clip_source=back(s.clip_source))
            for s in items.segments
        ],
    )


def _read_local(source: Source) -> SourceItems:
    if isinstance(source, FolderSource):
        return read_folder(source)
    if isinstance(source, TsvSource):
        return read_tsv(source)
    if isinstance(source, ParquetSource):
        return read_parquet(source)
    if isinstance(source, PackagedSource):
        return read_packaged(source)
    if isinstance(source, VideoSource):
        return read_videos(source)
    raise TypeError(f"no reader for source kind {type(source).__name__}")


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


def seed_candidates(
    seeds: list[SeedQuestion],
    id_of_source: dict[str, str],
    refused: dict[str, Rejection],
    dimension_map: dict[str, str] | None = None,
) -> tuple[list[CandidateRecord], list[Rejection]]:
    """Candidates from seed questions whose image was stored; a rejection for each other one."""
    rejections: list[Rejection] = []
    candidates: dict[str, CandidateRecord] = {}
    first_source: dict[str, str] = {}
    for seed in seeds:
        image = id_of_source.get(seed.image_source)
        if image is None:
            cause = refused.get(seed.image_source)
            why = f"{cause.reason}: {cause.detail}" if cause else "it was not read"
            rejections.append(
                Rejection(
                    seed.source,
                    seed.source_kind,
                    "image_rejected",
                    f"its image {seed.image_source} was refused ({why})",
                )
            )
            continue
        qid = question_id(image, seed.question, seed.options)
        if qid in candidates:
            rejections.append(
                Rejection(
                    seed.source,
                    seed.source_kind,
                    "duplicate_question",
                    f"same image, question and options as {first_source[qid]}",
                )
            )
            continue
        first_source[qid] = seed.source
        candidates[qid] = CandidateRecord(
            question_id=qid,
            image_id=image,
            dimension=(dimension_map or {}).get(
                seed.category or "", seed.category or "uncategorised"
            ),
            question=seed.question,
            hint=seed.hint,
            options=seed.options,
            answer=seed.answer,
            category=seed.category,
            l2_category=seed.l2_category,
            split=seed.split,
            generator=f"seed:{seed.source_kind}",
            prompt_id=None,
            prompt_hash=None,
            evidence=[],
            source=seed.source,
            meta=meta_map(seed.meta),
            raw_output=None,
        )
    return list(candidates.values()), rejections


class IngestRun:
    """One ingest into a run folder: batches of decoded images are stored as they come, then the
    seed questions, then the summary is drawn up."""

    def __init__(self, run: RunFolder, options: IngestOptions) -> None:
        self.run = run
        self.options = options
        self.catalog = ImageCatalog.from_run(run, options.near_duplicate_distance)
        self.id_of_source: dict[str, str] = {}
        self.refused: dict[str, Rejection] = {}
        self.reasons: Counter[str] = Counter()
        self.counts: Counter[str] = Counter()
        self.normalised: Counter[str] = Counter()
        self.examples: dict[str, list[str]] = {}  # reason -> the first few sources refused

    def _quarantine(self, rejections: list[Rejection]) -> None:
        self.reasons.update(r.reason for r in rejections)
        for r in rejections:
            named = self.examples.setdefault(r.reason, [])
            if len(named) < 3:
                named.append(r.source)
        written = self.run.table(QuarantineRecord).append([r.to_record() for r in rejections])
        self.counts["quarantine_added"] += written.added

    def store_batch(self, decoded: list[DecodedImage | Rejection]) -> None:
        """Store one decoded batch: new images, every origin, and the refusals."""
        outcome = self.catalog.admit(decoded)
        for image in outcome.images:
            self.normalised.update(_step_kind(step) for step in image.normalised)
        self.run.table(ImageRecord).append(outcome.images)
        self.run.table(ImageSourceRecord).append(outcome.image_sources)
        self._quarantine(outcome.rejections)
        self.id_of_source.update(outcome.id_of_source)
        self.refused.update({r.source: r for r in outcome.rejections})
        self.counts.update(
            images_read=len(decoded),
            images_decoded=len(outcome.image_sources),
            images_added=len(outcome.images),
            images_already_stored=outcome.already_stored,
            exact_duplicates=outcome.exact_duplicates,
            near_duplicates=outcome.near_duplicates,
        )

    def store_clips(self, decoded: list[DecodedClip]) -> None:
        """Store one batch of decoded clips: the clips, their keyframes as images, their
        segments, and what was refused."""
        clips = [d.clip for d in decoded if d.clip is not None]
        self.counts["clips_read"] += len(decoded)
        self.counts["clips_added"] += self.run.table(ClipRecord).append(clips).added
        frames = [
            DecodedImage(k.item, k.image_id, k.data, k.info) for d in decoded for k in d.keyframes
        ]
        outcome = self.catalog.admit(frames, link_near=False)
        self.run.table(ImageRecord).append(outcome.images)
        self.run.table(ImageSourceRecord).append(outcome.image_sources)
        self.counts["keyframes_added"] += len(outcome.images)
        segments = [s for d in decoded for s in d.segments]
        self.counts["segments_added"] += self.run.table(SegmentRecord).append(segments).added
        self._quarantine([r for d in decoded for r in d.rejections])

    def finish(
        self,
        sources: list[str],
        seeds: list[SeedQuestion],
        reader_rejections: list[Rejection],
        warnings: list[str] | None = None,
    ) -> IngestSummary:
        """Store seed candidates and the readers' refusals; return the summary."""
        candidates, rejections = seed_candidates(
            seeds, self.id_of_source, self.refused, self.options.dimension_map
        )
        written = self.run.table(CandidateRecord).append(candidates)
        self._quarantine(reader_rejections + rejections)
        tables = (
            ImageRecord,
            ImageSourceRecord,
            ClipRecord,
            SegmentRecord,
            CandidateRecord,
            QuarantineRecord,
        )
        return IngestSummary(
            run=str(self.run.root),
            sources=sources,
            **{
                k: self.counts[k]
                for k in (
                    "images_read",
                    "images_decoded",
                    "images_added",
                    "images_already_stored",
                    "exact_duplicates",
                    "near_duplicates",
                    "quarantine_added",
                )
            },
            seed_questions_read=len(seeds),
            candidates_added=written.added,
            candidates_already_stored=written.already_stored,
            quarantined_by_reason=dict(sorted(self.reasons.items())),
            tables={t.table: str(self.run.table(t).path) for t in tables},
            warnings=list(warnings or []),
            normalised_by_step=dict(sorted(self.normalised.items())),
            **{
                k: self.counts[k]
                for k in ("clips_read", "clips_added", "segments_added", "keyframes_added")
            },
        )


def _step_kind(step: str) -> str:
    """A normalising step without its particulars ('EXIF orientation 6 applied (...)' ->
    'EXIF orientation applied', "colour profile 'Adobe RGB (1998)' converted to sRGB" ->
    'colour profile converted to sRGB'), for counting."""
    general = re.sub(r"'[^']*' ", "", step)  # a colour profile's own name, which may hold " ("
    return re.sub(r"orientation \d+", "orientation", general.split(" (")[0])


class NothingIngested(UserError):
    """Ingest kept no image and no clip: nothing a later stage could ask about."""


def nothing_kept(summary: IngestSummary, examples: dict[str, list[str]]) -> str:
    """One line saying what ingest found when it kept nothing, and what to do."""
    found = (
        f"read {summary.images_read} image files or rows ({summary.images_decoded} decoded) "
        f"and {summary.clips_read} clips"
    )
    refused = "; ".join(
        f"{reason} {n} (e.g. {', '.join(examples.get(reason, [])) or '?'})"
        for reason, n in sorted(summary.quarantined_by_reason.items(), key=lambda kv: -kv[1])
    )
    return (
        f"ingest kept no image from {', '.join(summary.sources) or 'no source'}: {found}"
        + (f"; refused: {refused}" if refused else "")
        + f" (every refusal is in {summary.tables.get('quarantine', 'the quarantine table')}); "
        "point the spec's sources at images (" + ", ".join(sorted(imaging.IMAGE_SUFFIXES)) + ")"
        " or clips"
    )


# Decoded batches waiting to be stored, at most: bounds memory while decoding runs in parallel.
DECODE_AHEAD = 8
CLIPS_PER_TASK = 4


def run(stage: StageRun, mapper: Mapper = INLINE) -> IngestSummary:
    """The whole stage: read every source, decode images in batches (through `mapper`, so a
    flow runs them as parallel tasks), store each batch in source order, then the seed questions;
    refusals go to the quarantine table with their reasons."""
    options = stage.options.ingest
    items = SourceItems()
    for read in mapper.map(read_source, [((s,), 1) for s in stage.sources], label="read sources"):
        items.extend(read)
    limits = imaging.ImageLimits(min_side=options.min_side, max_pixels=options.max_pixels)
    ingest = IngestRun(RunFolder(stage.run), options)
    stored = dict(ingest.catalog.originals)
    total = len(items.images)
    jobs = (
        (
            (items.images[i : i + options.batch_size], limits, stored),
            len(items.images[i : i + options.batch_size]),
        )
        for i in range(0, total, options.batch_size)
    )
    for decoded in mapper.map(
        decode_batch, jobs, label="decode images", total=total, ahead=DECODE_AHEAD, retries=1
    ):
        ingest.store_batch(decoded)
    clip_limits = video.ClipLimits(options.min_side, options.max_pixels, options.max_clip_seconds)
    per_clip = clip_jobs(items.clips, items.segments)
    for decoded_clips in mapper.map(
        decode_clips,
        (
            (
                (per_clip[i : i + CLIPS_PER_TASK], clip_limits, options.keyframes),
                len(per_clip[i : i + CLIPS_PER_TASK]),
            )
            for i in range(0, len(per_clip), CLIPS_PER_TASK)
        ),
        label="decode clips",
        total=len(per_clip),
        ahead=DECODE_AHEAD,
        retries=1,
    ):
        ingest.store_clips(decoded_clips)
    summary = ingest.finish(
        [describe_source(s) for s in stage.sources], items.seeds, items.rejections, items.warnings
    )
    if not ingest.run.table(ImageRecord).count():
        raise NothingIngested(nothing_kept(summary, ingest.examples))
    return summary
