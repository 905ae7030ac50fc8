"""The extract stage (SEED-Bench's first step): for each stored image, instances (segmenter +
describer), text lines (OCR) and captions, kept as `visual_facts` keyed by image id and the
extractor configuration's hash, so a rerun or an incremental build extracts only what is new.
A failing image becomes a quarantine row with the reason; the batch goes on."""

from __future__ import annotations

import io
import json
import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
import pyarrow.parquet as pq
from PIL import Image

from benchfoundry.core.batches import INLINE, Mapper
from benchfoundry.core.ids import content_hash
from benchfoundry.core.reasons import Rejection, register
from benchfoundry.core.records import (
    Caption,
    ExtractorInfo,
    ImageRecord,
    Instance,
    OcrLine,
    QuarantineRecord,
    VisualFactsRecord,
)
from benchfoundry.extractors import registry
from benchfoundry.extractors.base import Captioner, ExtractorFailed, OcrBackend, Region, Segmenter
from benchfoundry.extractors.caption_composed import compose_context
from benchfoundry.extractors.describe import DESCRIBER, describe
from benchfoundry.gateway import Gateway
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.extract.motion import track_segments
from benchfoundry.tasks.extract.options import ExtractOptions
from benchfoundry.tasks.extract.summary import ExtractSummary

if TYPE_CHECKING:  # the stage contract's type; stages import nothing above them
    from benchfoundry.pipeline.registry import StageRun

logger = logging.getLogger(__name__)

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
    second_segmenter: Segmenter | None = None  # the second readings (`extractors.agreement`)
    second_ocr: OcrBackend | None = None


def build_extractors(options: ExtractOptions, extra: dict[str, object] | None = None) -> Extractors:
    """Build the backends the options name; `ExtractorUnavailable` says what is missing."""
    chosen = {role: getattr(options, role) for role in registry.ROLES}
    extra = extra or {}
    # How many images a backend takes at once is no setting of its facts: not in the hash.
    batching = {} if options.model_batch_size is None else {"batch_size": options.model_batch_size}
    built = {
        role: None
        if name == "none"
        else registry.create(
            role,
            name,
            {
                **options.settings(role),
                **(batching if role in ("segmenter", "captioner") else {}),
                **(extra if role == "captioner" else {}),
            },
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
        built["ocr"],  # type: ignore[arg-type]
        built["segmenter"],  # type: ignore[arg-type]
        built["captioner"],  # type: ignore[arg-type]
        options.label_instances,
        config,
        infos,
        second_segmenter=built["second_segmenter"],  # type: ignore[arg-type]
        second_ocr=built["second_ocr"],  # type: ignore[arg-type]
    )


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


@dataclass
class Pending:
    """One decoded image on its way through the backends, with the facts found so far."""

    image_id: str
    source: str
    image: Image.Image
    regions: list[Region] = field(default_factory=list)
    instances: list[Instance] = field(default_factory=list)
    lines: list[OcrLine] = field(default_factory=list)
    captions: list[Caption] = field(default_factory=list)
    second_instances: list[Instance] = field(default_factory=list)
    second_lines: list[OcrLine] = field(default_factory=list)

    def rejection(self, reason: str, detail: str) -> Rejection:
        return Rejection(
            self.source,
            "image",
            reason,
            f"{self.image_id[:12]}: {detail}",
            stage="extract",
            ref_id=self.image_id,
        )


def decoded(image_id: str, data: bytes, source: str, outcome: BatchOutcome) -> Pending | None:
    """The stored image as RGB, or its rejection in `outcome`."""
    try:
        return Pending(image_id, source, to_rgb(Image.open(io.BytesIO(data))))
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
        return None


def step(
    backend: str,
    items: list[Pending],
    fill: Callable[[list[Pending]], None],
    size: int,
    outcome: BatchOutcome,
) -> list[Pending]:
    """`fill` the images' facts `size` at a time; the images it did not fail on come back. A
    batch it fails on is filled again one image at a time, so that only the image at fault is
    rejected (with the reason); its time goes to `outcome.seconds[backend]`."""
    started = time.perf_counter()
    done = []
    for at in range(0, len(items), size):
        part = items[at : at + size]
        if len(part) > 1:
            try:
                fill(part)
                done += part
                continue
            except (ExtractorFailed, MemoryError) as exc:
                logger.info("%s failed on a batch of %d (%s); each alone", backend, len(part), exc)
        for item in part:
            try:
                fill([item])
                done.append(item)
            except MemoryError:
                size_text = f"{item.image.width}x{item.image.height}"
                outcome.rejections.append(item.rejection("out_of_memory", size_text))
            except ExtractorFailed as exc:
                outcome.rejections.append(item.rejection("extractor_failed", str(exc)))
    outcome.seconds[backend] += time.perf_counter() - started
    return done


def segment(segmenter: Segmenter, part: list[Pending]) -> None:
    for item, regions in zip(part, segmenter.segment_many([p.image for p in part]), strict=True):
        item.regions = regions


def describe_regions(captioner: Captioner | None, part: list[Pending]) -> None:
    for item in part:
        item.instances = describe(item.image, item.regions, captioner)
        item.regions = []  # their masks are no longer needed


def read_text(ocr: OcrBackend, part: list[Pending]) -> None:
    for item in part:
        item.lines = ocr.read(item.image)


def second_segment(segmenter: Segmenter, part: list[Pending]) -> None:
    """The second reading of the objects, described as the first (colours, shapes, places)."""
    for item, regions in zip(part, segmenter.segment_many([p.image for p in part]), strict=True):
        item.second_instances = describe(item.image, regions)


def second_read(ocr: OcrBackend, part: list[Pending]) -> None:
    """The second reading of the text, where the first OCR read a line (elsewhere there is
    nothing for it to confirm)."""
    for item in part:
        item.second_lines = ocr.read(item.image) if item.lines else []


def caption(captioner: Captioner, part: list[Pending]) -> None:
    contexts = [compose_context(p.instances, p.lines) for p in part]
    found = captioner.caption_many([p.image for p in part], contexts)
    for item, captions in zip(part, found, strict=True):
        item.captions = captions


def extract_images(items: list[Pending], extractors: Extractors, outcome: BatchOutcome) -> None:
    """Facts for decoded images, in the order a backend's inputs need them: the segmenter and
    the captioner over batches of their `batch_size`, the describer and OCR image by image.
    Each image's facts or its rejection go to `outcome`."""
    segmenter, ocr, captioner = extractors.segmenter, extractors.ocr, extractors.captioner
    if segmenter is not None:
        items = step("segmenter", items, partial(segment, segmenter), segmenter.batch_size, outcome)
        labeller = captioner if extractors.label_instances else None
        items = step("describer", items, partial(describe_regions, labeller), 1, outcome)
    if ocr is not None:
        items = step("ocr", items, partial(read_text, ocr), 1, outcome)
    if extractors.second_segmenter is not None:
        second = extractors.second_segmenter
        items = step("second segmenter", items, partial(second_segment, second), 1, outcome)
    if extractors.second_ocr is not None:
        items = step("second ocr", items, partial(second_read, extractors.second_ocr), 1, outcome)
    if captioner is not None:
        items = step("captioner", items, partial(caption, captioner), captioner.batch_size, outcome)
    outcome.records += [
        VisualFactsRecord(
            image_id=item.image_id,
            config_hash=extractors.config_hash,
            captions=item.captions,
            instances=item.instances,
            ocr_lines=item.lines,
            extractors=extractors.infos,
            second_instances=item.second_instances,
            second_ocr_lines=item.second_lines,
        )
        for item in items
    ]


def extract_batch(batch: list[tuple[str, bytes, str]], extractors: Extractors) -> BatchOutcome:
    """Facts for a batch of stored images, decoded a model batch at a time (the larger of the
    segmenter's and the captioner's `batch_size`), so that only that many are held at once."""
    outcome = BatchOutcome()
    held = max(
        [1] + [b.batch_size for b in (extractors.segmenter, extractors.captioner) if b is not None]
    )
    for at in range(0, len(batch), held):
        items = [decoded(*row, outcome) for row in batch[at : at + held]]
        extract_images([i for i in items if i is not None], extractors, outcome)
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
