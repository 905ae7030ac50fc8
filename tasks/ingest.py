"""The ingest stage: read sources, decode every image for real, store each image once, link
near duplicates, turn benchmark rows into seed candidates, and quarantine the rest with reasons.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from prefect import task
from prefect.cache_policies import NO_CACHE

from benchfoundry import imaging, progress
from benchfoundry.ids import image_id, question_id
from benchfoundry.report import IngestSummary
from benchfoundry.records import CandidateRecord, ImageRecord, ImageSourceRecord, QuarantineRecord
from benchfoundry.spec import FolderSource, IngestOptions, PackagedSource, ParquetSource, Source, TsvSource
from benchfoundry.storage import RunFolder
from tasks.ingest_files import read_folder, read_packaged
from tasks.ingest_items import RawImage, Rejection, SeedQuestion, SourceItems, meta_json
from tasks.ingest_tables import read_parquet, read_tsv


def read_source(source: Source) -> SourceItems:
    """Everything one source yields, before decoding."""
    if isinstance(source, FolderSource):
        return read_folder(source)
    if isinstance(source, TsvSource):
        return read_tsv(source)
    if isinstance(source, ParquetSource):
        return read_parquet(source)
    if isinstance(source, PackagedSource):
        return read_packaged(source)
    raise TypeError(f"no reader for source kind {type(source).__name__}")


@dataclass(frozen=True)
class DecodedImage:
    item: RawImage
    image_id: str
    data: bytes
    info: imaging.ImageInfo


def decode_one(item: RawImage, limits: imaging.ImageLimits) -> DecodedImage | Rejection:
    """Read and fully decode one image, or say why not."""
    try:
        data = item.read()
        info = imaging.inspect(data, limits)
    except imaging.ImageRejected as exc:
        return Rejection(item.source, item.source_kind, exc.reason, exc.detail)
    return DecodedImage(item, image_id(data), data, info)


def decode_batch(items: list[RawImage], limits: imaging.ImageLimits) -> list[DecodedImage | Rejection]:
    return [decode_one(item, limits) for item in items]


@dataclass
class Assembled:
    images: list[ImageRecord]
    image_sources: list[ImageSourceRecord]
    candidates: list[CandidateRecord]
    rejections: list[Rejection]
    exact_duplicates: int
    near_duplicates: int
    already_stored: int


def assemble(
    decoded: list[DecodedImage | Rejection],
    seeds: list[SeedQuestion],
    rejections: list[Rejection],
    stored_hashes: dict[str, tuple[str, str | None]],
    near_distance: int,
) -> Assembled:
    """Turn decoded images and seeds into records.

    `stored_hashes` maps the image ids already stored to (phash, duplicate_of). An image whose
    bytes were seen before is stored once, every origin kept in `image_sources`. A new image within
    `near_distance` bits of a stored or earlier non-duplicate image points at it by `duplicate_of`.
    """
    rejections = list(rejections)
    canonical_ids = sorted(i for i, (_, dup) in stored_hashes.items() if dup is None)
    canonical_hashes = [stored_hashes[i][0] for i in canonical_ids]
    images: dict[str, ImageRecord] = {}
    image_sources: list[ImageSourceRecord] = []
    id_of_source: dict[str, str] = {}
    exact = near = already = 0
    seen: set[str] = set()
    for entry in decoded:
        if isinstance(entry, Rejection):
            rejections.append(entry)
            continue
        item = entry.item
        id_of_source[item.source] = entry.image_id
        image_sources.append(ImageSourceRecord(image_id=entry.image_id, source=item.source,
                                               source_kind=item.source_kind, license=item.license,
                                               meta=meta_json(item.meta)))
        if entry.image_id in seen:
            exact += 1
            continue
        seen.add(entry.image_id)
        if entry.image_id in stored_hashes:
            already += 1
            continue
        duplicate_of, distance = None, None
        index, bits = imaging.nearest(entry.info.phash, imaging.hashes_array(canonical_hashes))
        if index >= 0 and bits <= near_distance:
            duplicate_of, distance = canonical_ids[index], bits
            near += 1
        else:
            canonical_ids.append(entry.image_id)
            canonical_hashes.append(entry.info.phash)
        info = entry.info
        meta = {**item.meta, **({"frames": str(info.frames)} if info.frames > 1 else {})}
        images[entry.image_id] = ImageRecord(
            image_id=entry.image_id, source=item.source, source_kind=item.source_kind,
            width=info.width, height=info.height, format=info.format, mode=info.mode,
            n_bytes=len(entry.data), phash=info.phash, duplicate_of=duplicate_of,
            duplicate_distance=distance, license=item.license, meta=meta_json(meta), bytes=entry.data,
        )
    refused_images = {r.source: r for r in rejections}
    candidates: dict[str, CandidateRecord] = {}
    first_source: dict[str, str] = {}
    for seed in seeds:
        image = id_of_source.get(seed.image_source)
        if image is None:
            cause = refused_images.get(seed.image_source)
            why = f"{cause.reason}: {cause.detail}" if cause else "it was not read"
            rejections.append(Rejection(seed.source, seed.source_kind, "image_rejected",
                                        f"its image {seed.image_source} was refused ({why})"))
            continue
        qid = question_id(image, seed.question, seed.options)
        if qid in candidates:
            rejections.append(Rejection(seed.source, seed.source_kind, "duplicate_question",
                                        f"same image, question and options as {first_source[qid]}"))
            continue
        first_source[qid] = seed.source
        candidates[qid] = CandidateRecord(
            question_id=qid, image_id=image, dimension=seed.category or "uncategorised",
            question=seed.question, hint=seed.hint, options=seed.options, answer=seed.answer,
            category=seed.category, l2_category=seed.l2_category, split=seed.split,
            generator=f"seed:{seed.source_kind}", prompt_id=None, prompt_hash=None, evidence=[],
            source=seed.source, meta=meta_json(seed.meta), raw_output=None,
        )
    return Assembled(list(images.values()), image_sources, list(candidates.values()), rejections, exact, near, already)


def stored_hashes(run: RunFolder) -> dict[str, tuple[str, str | None]]:
    table = run.table(ImageRecord).read(columns=["image_id", "phash", "duplicate_of"])
    return {
        i: (h, d)
        for i, h, d in zip(*(table.column(c).to_pylist() for c in ("image_id", "phash", "duplicate_of")), strict=True)
    }


def store(run: RunFolder, sources: list[str], items: SourceItems, decoded: list[DecodedImage | Rejection],
          options: IngestOptions) -> IngestSummary:
    """Assemble records and append them to the run's tables; summarise what happened."""
    result = assemble(decoded, items.seeds, items.rejections, stored_hashes(run), options.near_duplicate_distance)
    written_images = run.table(ImageRecord).append(result.images)
    run.table(ImageSourceRecord).append(result.image_sources)
    written_candidates = run.table(CandidateRecord).append(result.candidates)
    quarantine = [r.to_record() for r in result.rejections]
    written_quarantine = run.table(QuarantineRecord).append(quarantine)
    return IngestSummary(
        run=str(run.root),
        sources=sources,
        images_read=len(decoded),
        images_decoded=sum(isinstance(d, DecodedImage) for d in decoded),
        images_added=written_images.added,
        images_already_stored=result.already_stored + written_images.already_stored,
        exact_duplicates=result.exact_duplicates,
        near_duplicates=result.near_duplicates,
        seed_questions_read=len(items.seeds),
        candidates_added=written_candidates.added,
        candidates_already_stored=written_candidates.already_stored,
        quarantined_by_reason=dict(sorted(Counter(r.reason for r in result.rejections).items())),
        quarantine_added=written_quarantine.added,
        tables={t.table: str(run.table(t).path) for t in (ImageRecord, ImageSourceRecord, CandidateRecord, QuarantineRecord)},
    )


# --- thin Prefect tasks ---------------------------------------------------------------------------


@task(name="read-source", cache_policy=NO_CACHE)
def read_source_task(source: Source) -> SourceItems:
    items = read_source(source)
    progress.report("read sources", 1)
    return items


@task(name="decode-images", retries=1, cache_policy=NO_CACHE)
def decode_batch_task(items: list[RawImage], limits: imaging.ImageLimits, total: int) -> list[DecodedImage | Rejection]:
    decoded = decode_batch(items, limits)
    progress.report("decode images", len(items), total)
    return decoded


@task(name="store-ingest", cache_policy=NO_CACHE)
def store_task(run_root: str, sources: list[str], items: SourceItems, decoded: list[DecodedImage | Rejection],
               options: IngestOptions) -> IngestSummary:
    return store(RunFolder(run_root), sources, items, decoded, options)
