"""The ingest stage: read sources, decode every image for real, store each image once, link
near duplicates, turn benchmark rows into seed candidates, and quarantine the rest with reasons.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

from benchfoundry.core import imaging, video
from benchfoundry.core.batches import INLINE, Mapper
from benchfoundry.core.errors import UserError
from benchfoundry.core.ids import question_id
from benchfoundry.core.reasons import Rejection
from benchfoundry.core.records import (
    CandidateRecord,
    ClipRecord,
    ImageRecord,
    ImageSourceRecord,
    QuarantineRecord,
    SegmentRecord,
)
from benchfoundry.sources.items import (
    SeedQuestion,
    SourceItems,
    meta_map,
)
from benchfoundry.sources.models import (
    describe_source,
)
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.ingest.clips import DecodedClip, clip_jobs, decode_clips
from benchfoundry.tasks.ingest.images import DecodedImage, ImageCatalog, decode_batch
from benchfoundry.tasks.ingest.options import IngestOptions
from benchfoundry.tasks.ingest.reading import read_source
from benchfoundry.tasks.ingest.summary import IngestSummary

if TYPE_CHECKING:  # the stage contract's type; stages import nothing above them
    from benchfoundry.pipeline.registry import StageRun


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
