"""The extract stage (SEED-Bench's first step): for each stored image, instances (segmenter +
describer), text lines (OCR) and captions, kept as `visual_facts` keyed by image id and the
extractor configuration's hash, so a rerun or an incremental build extracts only what is new.
A failing image becomes a quarantine row with the reason; the batch goes on."""

from __future__ import annotations

import io
import json
import os
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pyarrow.parquet as pq
from PIL import Image

from benchfoundry.core.batches import INLINE, Mapper
from benchfoundry.core.ids import content_hash
from benchfoundry.core.reasons import Rejection, register
from benchfoundry.core.records import (
    ExtractorInfo,
    ImageRecord,
    QuarantineRecord,
    VisualFactsRecord,
)
from benchfoundry.extractors import registry
from benchfoundry.extractors.base import Captioner, ExtractorFailed, OcrBackend, Segmenter
from benchfoundry.extractors.caption_composed import compose_context
from benchfoundry.extractors.describe import DESCRIBER, describe
from benchfoundry.gateway import Gateway
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.extract.motion import track_segments
from benchfoundry.tasks.extract.options import ExtractOptions
from benchfoundry.tasks.extract.summary import ExtractSummary

if TYPE_CHECKING:  # the stage contract's type; stages import nothing above them
    from benchfoundry.pipeline.registry import StageRun

REASONS = register(
    "extract",
    {
        "extractor_failed": "a backend failed on this image (its message says which and why)",
        "out_of_memory": "the image was too large for a backend's memory",
        "bad_pixels": "the stored image could not be decoded again",
    },
)


@dataclass
class Extractors:
    """The backends chosen for a run, built once."""

    ocr: OcrBackend | None
    segmenter: Segmenter | None
    captioner: Captioner | None
    label_instances: bool
    config_hash: str
    infos: list[ExtractorInfo]
    gateway: Gateway | None = None  # the run's, when a backend calls models through it


def build_extractors(options: ExtractOptions, extra: dict[str, object] | None = None) -> Extractors:
    """Build the backends the options name; `ExtractorUnavailable` says what is missing."""
    chosen = {"ocr": options.ocr, "segmenter": options.segmenter, "captioner": options.captioner}
    extra = extra or {}
    built = {
        role: None
        if name == "none"
        else registry.create(
            role, name, {**options.settings(role), **(extra if role == "captioner" else {})}
        )
        for role, name in chosen.items()
    }
    # Only what changes the facts: each chosen backend, its version and its own settings.
    semantic = {
        "label_instances": options.label_instances,
        "describer": DESCRIBER,
        "backends": {
            role: {
                "name": b.name,
                "model": b.model,
                "version": b.version,
                "settings": options.settings(role),
            }
            if b
            else None
            for role, b in built.items()
        },
    }
    config = content_hash(json.loads(json.dumps(semantic, default=str)), length=16)
    infos = [
        ExtractorInfo(
            role=role, backend=b.name, model=b.model, version=b.version, config_hash=config
        )
        for role, b in built.items()
        if b is not None
    ]
    return Extractors(
        built["ocr"], built["segmenter"], built["captioner"], options.label_instances, config, infos
    )  # type: ignore[arg-type]


def to_rgb(image: Image.Image) -> Image.Image:
    """8-bit RGB for the backends: 16-bit and float images scaled down (not clipped), images with
    transparency painted onto white (transparent text would otherwise vanish into black)."""
    image.load()
    if image.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        array = np.asarray(image, dtype=np.float64)
        low, high = float(array.min()), float(array.max())
        scaled = (array - low) / (high - low) * 255 if high > low else np.zeros_like(array)
        image = Image.fromarray(scaled.astype(np.uint8))
    if image.mode == "P" and "transparency" in image.info:
        image = image.convert("RGBA")
    if image.mode in ("RGBA", "LA", "PA"):
        background = Image.new("RGBA", image.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, image.convert("RGBA")).convert("RGB")
    return image.convert("RGB")


@dataclass
class BatchOutcome:
    records: list[VisualFactsRecord] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    seconds: Counter[str] = field(default_factory=Counter)
    pid: int = field(default_factory=os.getpid)  # the process that extracted the batch


def extract_one(
    image_id: str, data: bytes, source: str, extractors: Extractors, outcome: BatchOutcome
) -> None:
    """Facts for one image, or its rejection; time spent per backend goes to `outcome.seconds`."""
    try:
        image = to_rgb(Image.open(io.BytesIO(data)))
    except Exception as exc:  # a stored image that no longer decodes
        outcome.rejections.append(
            Rejection(
                source,
                "image",
                "bad_pixels",
                f"{image_id[:12]}: {exc}",
                stage="extract",
                ref_id=image_id,
            )
        )
        return
    try:
        instances, lines, captions = [], [], []
        if extractors.segmenter is not None:
            started = time.perf_counter()
            regions = extractors.segmenter.segment(image)
            outcome.seconds["segmenter"] += time.perf_counter() - started
            started = time.perf_counter()
            instances = describe(
                image, regions, extractors.captioner if extractors.label_instances else None
            )
            outcome.seconds["describer"] += time.perf_counter() - started
        if extractors.ocr is not None:
            started = time.perf_counter()
            lines = extractors.ocr.read(image)
            outcome.seconds["ocr"] += time.perf_counter() - started
        if extractors.captioner is not None:
            started = time.perf_counter()
            captions = extractors.captioner.caption(image, compose_context(instances, lines))
            outcome.seconds["captioner"] += time.perf_counter() - started
    except MemoryError:
        outcome.rejections.append(
            Rejection(
                source,
                "image",
                "out_of_memory",
                f"{image_id[:12]}: {image.width}x{image.height}",
                stage="extract",
                ref_id=image_id,
            )
        )
        return
    except ExtractorFailed as exc:
        outcome.rejections.append(
            Rejection(
                source,
                "image",
                "extractor_failed",
                f"{image_id[:12]}: {exc}",
                stage="extract",
                ref_id=image_id,
            )
        )
        return
    outcome.records.append(
        VisualFactsRecord(
            image_id=image_id,
            config_hash=extractors.config_hash,
            captions=captions,
            instances=instances,
            ocr_lines=lines,
            extractors=extractors.infos,
        )
    )


def extract_batch(batch: list[tuple[str, bytes, str]], extractors: Extractors) -> BatchOutcome:
    outcome = BatchOutcome()
    for image_id, data, source in batch:
        extract_one(image_id, data, source, extractors, outcome)
    return outcome


def done_images(run: RunFolder, config_hash: str) -> set[str]:
    """Images that already have facts under this configuration."""
    return {
        image for image, config in run.table(VisualFactsRecord).key_set() if config == config_hash
    }


def pending_batches(
    run: RunFolder, config_hash: str, batch_size: int
) -> Iterator[list[tuple[str, bytes, str]]]:
    """Stored images without facts for this configuration, a batch at a time, read part by part."""
    done = done_images(run, config_hash)
    batch: list[tuple[str, bytes, str]] = []
    for part in run.table(ImageRecord).parts():
        for rows in pq.ParquetFile(part).iter_batches(
            batch_size=64, columns=["image_id", "bytes", "source"]
        ):
            for image_id, data, source in zip(
                *(rows.column(c).to_pylist() for c in ("image_id", "bytes", "source")), strict=True
            ):
                if image_id in done:
                    continue
                batch.append((image_id, data, source))
                if len(batch) == batch_size:
                    yield batch
                    batch = []
    if batch:
        yield batch


def store_outcome(run: RunFolder, outcome: BatchOutcome) -> None:
    run.table(VisualFactsRecord).append(outcome.records)
    run.table(QuarantineRecord).append([r.to_record() for r in outcome.rejections])


def summarise(
    run: RunFolder,
    extractors: Extractors,
    outcomes: list[BatchOutcome],
    already: int,
    seconds: float,
    context_max_chars: int,
) -> ExtractSummary:
    from benchfoundry.storage.visual_context import render

    records = [r for o in outcomes for r in o.records]
    n = max(1, len(records))
    spent: Counter[str] = Counter()
    for o in outcomes:
        spent.update(o.seconds)
    example = max(
        records, key=lambda r: (len(r.instances) + len(r.ocr_lines), r.image_id), default=None
    )
    return ExtractSummary(
        run=str(run.root),
        config_hash=extractors.config_hash,
        extractors=[
            {"role": i.role, "backend": i.backend, "model": i.model} for i in extractors.infos
        ],
        images_total=run.table(ImageRecord).count(),
        images_already_done=already,
        images_extracted=len(records),
        quarantined_by_reason=dict(Counter(r.reason for o in outcomes for r in o.rejections)),
        mean_instances=sum(len(r.instances) for r in records) / n,
        mean_ocr_lines=sum(len(r.ocr_lines) for r in records) / n,
        mean_captions=sum(len(r.captions) for r in records) / n,
        seconds_by_backend={k: round(v, 3) for k, v in sorted(spent.items())},
        seconds_total=round(seconds, 3),
        processes=len({o.pid for o in outcomes}),
        in_flow_process=any(o.pid == os.getpid() for o in outcomes),
        example_image=example.image_id if example else None,
        example_context=render(example, context_max_chars) if example else None,
    )


# Extractors built in this process, by (run folder, options, catalogue): a worker builds the
# backends once and reuses them for every batch it is given. The last two configurations are kept.
_BUILT: dict[tuple[str, str, str | None], Extractors] = {}
_BUILT_LOCK = threading.Lock()
_KEEP = 2


def extractors_for(run_root: str, options: ExtractOptions, catalogue: str | None) -> Extractors:
    """The backends the options name, built once per process; model-backed ones call models
    through the run's gateway (its cache and usage journal, the spec's model catalogue
    `catalogue`, else the default one)."""
    key = (str(run_root), options.model_dump_json(), catalogue)
    with _BUILT_LOCK:
        if key in _BUILT:
            return _BUILT[key]
        extra: dict[str, object] = {}
        gateway = None
        if options.captioner == "vlm":
            from benchfoundry.gateway.assemble import gateway_for_run

            gateway = gateway_for_run(run_root, stage="extract", catalogue_path=catalogue)
            extra["gateway"] = gateway
        extractors = build_extractors(options, extra)
        extractors.gateway = gateway
        while len(_BUILT) >= _KEEP:
            _BUILT.pop(next(iter(_BUILT)))
        _BUILT[key] = extractors
        return extractors


def extract_job(
    run_root: str,
    batch: list[tuple[str, bytes, str]],
    options: ExtractOptions,
    catalogue: str | None,
) -> BatchOutcome:
    """One batch, in whichever process runs it: (image id, bytes, source) in, facts out."""
    return extract_batch(batch, extractors_for(run_root, options, catalogue))


# Batches being extracted at once, at most (on the thread pool they share the backends).
IN_FLIGHT = 2


def run(stage: StageRun, mapper: Mapper = INLINE) -> ExtractSummary:
    """The whole stage: facts for every stored image that has none under this configuration,
    batch by batch through `mapper`, each batch stored as it comes back."""
    from benchfoundry.gateway import usage

    options = stage.options.extract
    run_folder = RunFolder(stage.run)
    started = time.perf_counter()
    extractors = extractors_for(stage.run, options, stage.catalogue)
    done_before = len(done_images(run_folder, extractors.config_hash))
    total = run_folder.table(ImageRecord).count() - done_before
    jobs = (
        ((stage.run, batch, options, stage.catalogue), len(batch))
        for batch in pending_batches(run_folder, extractors.config_hash, options.batch_size)
    )
    outcomes = []
    for outcome in mapper.map(
        extract_job, jobs, label="extract facts", total=total, ahead=IN_FLIGHT, retries=1
    ):
        store_outcome(run_folder, outcome)
        outcomes.append(outcome)
    if extractors.gateway is not None:
        usage.rebuild(stage.run)  # the captioner's calls (journaled as made), in RUN/usage.json
    tracked = track_segments(run_folder, extractors.config_hash)
    summary = summarise(
        run_folder,
        extractors,
        outcomes,
        done_before,
        time.perf_counter() - started,
        options.context_max_chars,
    )
    return summary.model_copy(update={"segments_tracked": tracked})
