"""What the review app shows, read from the run folder and its review database: the run's tables
cached until their files change, decisions and progress from the database, the checks a
signed-in user's decision must pass."""

from __future__ import annotations

import contextlib
import threading
import time
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from benchfoundry.core.records import (
    CandidateRecord,
    ClipRecord,
    ImageRecord,
    ImageSourceRecord,
    JudgementRecord,
    ReviewBatchRecord,
    ReviewRecord,
    ScoredRecord,
    TranslationRecord,
    VisualFactsRecord,
)
from benchfoundry.decisions.store import ReviewStore
from benchfoundry.decisions.twins import twin_candidates
from benchfoundry.storage.not_asked import asked_nothing
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.review.app.conflicts import open_conflicts
from benchfoundry.tasks.review.app.evidence import overlay_shapes
from benchfoundry.tasks.review.app.samples import batch_samples

RECHECK_S = 1.0  # how often the app looks whether the run's tables changed on disk
FULL_PAIRS_S = 30.0  # how often progress is read whole from the database
# A clip's media type by the container PyAV named at ingest (`clips.container`).
CLIP_TYPES = {"mov": "video/mp4", "matroska": "video/webm", "avi": "video/x-msvideo"}
MEDIA_TYPES = {
    "PNG": "image/png",
    "JPEG": "image/jpeg",
    "GIF": "image/gif",
    "WEBP": "image/webp",
    "BMP": "image/bmp",
    "TIFF": "image/tiff",
}


class ReviewData:
    """What the pages show. Decisions come from the review database on each request (decisions
    from other tools and people show up at once); the run's tables (candidates, scores,
    judgements, batches) are read once and again only when their files change."""

    def __init__(self, run: RunFolder, store: ReviewStore | None = None) -> None:
        self.run = run
        self.store = store or ReviewStore.open(run)
        self._tables: dict[str, tuple[tuple[Any, ...], Any, float]] = {}
        self._lock = threading.Lock()
        self._dimensions: dict[str, list[str]] | None = None
        self._table_objects: dict[type[Any], Any] = {}
        self._pairs: set[tuple[str, str]] = set()
        self._pairs_mark = 0
        self._pairs_read_at = float("-inf")
        self._items: tuple[Any, Any, dict[str, CandidateRecord]] | None = None

    def warm_in_background(self) -> threading.Thread:
        """Read the run's tables into the caches in a thread, so that the first pages are as
        fast as the rest (a request before it finishes reads what it needs itself)."""

        def warm() -> None:
            with contextlib.suppress(Exception):  # a request will say what is wrong
                self.candidates(), self.scored(), self.judgements(), self.visual_facts()
                self._stored_batches(), self.dimensions(), self.decided_pairs()
                self.image_files(())

        thread = threading.Thread(target=warm, name="review-app-warm", daemon=True)
        thread.start()
        return thread

    def decided_pairs(self) -> set[tuple[str, str]]:
        """Every (question_id, reviewer) with a decision, for progress: read whole every
        `FULL_PAIRS_S` seconds, otherwise only the decisions stored since (by id), so a request
        costs what changed, not what was decided. (On PostgreSQL a decision committed after a
        later id was read shows at the next whole read.)"""
        with self._lock:
            now = time.monotonic()
            if now - self._pairs_read_at > FULL_PAIRS_S:
                pairs, mark = self.store.pairs_since(0)
                self._pairs, self._pairs_mark, self._pairs_read_at = pairs, mark, now
            else:
                new, self._pairs_mark = self.store.pairs_since(self._pairs_mark)
                if new:  # a new set: a request still counting on the old one is not disturbed
                    self._pairs = self._pairs | new
            return self._pairs

    def _table(self, record_type: type[Any], build: Any) -> Any:
        """`build(records)` of a run table, cached until the table's parts change (looked at
        at most once a second)."""
        return self._columns(record_type, lambda table: build(table.records() if table else []))

    def _columns(self, record_type: type[Any], build: Any) -> Any:
        """`build(table)`, reading what it needs of a run table (`build(None)` for a table not
        written), cached as `_table` caches: for a table too heavy to read whole (the images')."""
        table = self._table_objects.get(record_type)
        if table is None:
            table = self._table_objects[record_type] = self.run.table(record_type)
        now = time.monotonic()
        with self._lock:
            found = self._tables.get(table.name)
            if found is not None and now - found[2] < RECHECK_S:
                return found[1]
        parts = table.parts()
        key = tuple((p.name, p.stat().st_mtime_ns) for p in parts)
        if found is not None and found[0] == key:
            with self._lock:
                self._tables[table.name] = (key, found[1], now)
            return found[1]
        value = build(table) if parts else build(None)
        with self._lock:
            self._tables[table.name] = (key, value, now)
        return value

    def refuse(self, principal: Any, decision: Any) -> tuple[int, str] | None:
        """(status, why) when the signed-in user may not make this decision, else None: the
        decision is recorded under their own name; an annotator decides only in the batches
        assigned to them (their own and their cross-checks); only adjudicators and admins
        adjudicate."""
        if decision.reviewer != principal.name:
            return 403, (
                f"you are signed in as {principal.name}: a decision is recorded under your own "
                f"name, not {decision.reviewer}"
            )
        if decision.adjudication is True and principal.role not in ("adjudicator", "admin"):
            return 403, f"only an adjudicator or an admin adjudicates; you are {principal.role}"
        if principal.role != "annotator":
            return None
        if decision.question_id not in self.items():
            return 404, f"no candidate with question id '{decision.question_id}' in this run"
        stored = self._stored_batches()
        moved = self.store.assignments()

        def owner(b: ReviewBatchRecord) -> str:
            return moved.get(b.batch_id, b.reviewer)

        if decision.batch_id is not None:
            batch = stored["by_id"].get(decision.batch_id)
            if batch is None:
                return 404, f"no batch {decision.batch_id}"
            if owner(batch) != principal.name:
                return 403, f"batch {decision.batch_id} is assigned to {owner(batch)}, not you"
            if decision.question_id not in stored["questions"][batch.batch_id]:
                return 422, f"{decision.question_id} is not in batch {decision.batch_id}"
            return None
        holding = stored["holding"].get(decision.question_id, [])
        if not any(owner(b) == principal.name for b in holding):
            return 403, f"{decision.question_id} is in none of the batches assigned to you"
        return None

    def _stored_batches(self) -> dict[str, Any]:
        """The batches as exported, indexed: by id, their questions as sets, and the batches
        holding each question."""

        def build(rs: list[ReviewBatchRecord]) -> dict[str, Any]:
            holding: dict[str, list[ReviewBatchRecord]] = defaultdict(list)
            for b in rs:
                for q in b.question_ids:
                    holding[q].append(b)
            return {
                "list": rs,
                "by_id": {b.batch_id: b for b in rs},
                "questions": {b.batch_id: set(b.question_ids) for b in rs},
                "holding": holding,
            }

        return self._table(ReviewBatchRecord, build)

    def candidates(self) -> dict[str, CandidateRecord]:
        return self._table(CandidateRecord, lambda rs: {c.question_id: c for c in rs})

    def items(self) -> dict[str, CandidateRecord]:
        """Everything a decision may be about: the candidates and their twins
        (`<question_id>@<language>`), rebuilt when either table changes."""
        candidates, twins = self.candidates(), self.translations()
        with self._lock:
            found = self._items
            if found is not None and found[0] is candidates and found[1] is twins:
                return found[2]
        every = dict(candidates)
        every.update(twin_candidates(candidates, (t for ts in twins.values() for t in ts)))
        with self._lock:
            self._items = (candidates, twins, every)  # the tables themselves: compared by identity
        return every

    def translations(self) -> dict[str, list[TranslationRecord]]:
        """question_id -> its twins in other languages (the translate stage's)."""

        def build(rs: list[TranslationRecord]) -> dict[str, list[TranslationRecord]]:
            out: dict[str, list[TranslationRecord]] = defaultdict(list)
            for t in sorted(rs, key=lambda t: t.language):
                out[t.question_id].append(t)
            return out

        return self._table(TranslationRecord, build)

    def scored(self) -> dict[str, ScoredRecord]:
        return self._table(ScoredRecord, lambda rs: {s.question_id: s for s in rs})

    def judgements(self) -> dict[str, list[JudgementRecord]]:
        def build(rs: list[JudgementRecord]) -> dict[str, list[JudgementRecord]]:
            out: dict[str, list[JudgementRecord]] = defaultdict(list)
            for j in rs:
                if j.pass_index == 0:
                    out[j.question_id].append(j)
            return out

        return self._table(JudgementRecord, build)

    def batches(self) -> list[ReviewBatchRecord]:
        stored = self._stored_batches()["list"]
        moved = self.store.assignments()
        out = [
            b.model_copy(update={"reviewer": moved[b.batch_id]}) if b.batch_id in moved else b
            for b in stored
        ]
        return sorted(out, key=lambda b: (b.reviewer, b.dimension, b.part, b.batch_id))

    def batch(self, batch_id: str) -> ReviewBatchRecord | None:
        found = self._stored_batches()["by_id"].get(batch_id)
        moved = self.store.assignments().get(batch_id) if found is not None else None
        return found.model_copy(update={"reviewer": moved}) if moved else found

    def dimensions(self) -> list[str]:
        """Every dimension a move may name (`reviews.run_dimensions`)."""
        return sorted(d for ds in self.media_dimensions().values() for d in ds)

    def media_dimensions(self) -> dict[str, list[str]]:
        """`image` and `video` -> the dimensions a question on it may move to: the move menu
        offers only its own medium's (`reviews.media_dimensions`)."""
        from benchfoundry.decisions.reviews import media_dimensions

        if self._dimensions is None:
            self._dimensions = media_dimensions(self.run)
        return self._dimensions

    def reviews(self) -> list[ReviewRecord]:
        """Every stored decision, from the review database."""
        return self.store.records()

    def visual_facts(self) -> list[VisualFactsRecord]:
        return self._table(VisualFactsRecord, list)

    def image_files(self, image_ids: Iterable[str]) -> dict[str, list[str]]:
        """image_id -> the files (or rows) it was ingested from, as ingest named them: the first
        seen (`images.source`), then its other origins (`image_sources`); no bytes are read."""

        def named(table: Any) -> dict[str, list[str]]:
            out: dict[str, list[str]] = defaultdict(list)
            for row in table.read(columns=["image_id", "source"]).to_pylist() if table else []:
                if row["source"] not in out[row["image_id"]]:
                    out[row["image_id"]].append(row["source"])
            return out

        first, every = self._columns(ImageRecord, named), self._columns(ImageSourceRecord, named)
        return {
            i: first.get(i, []) + [s for s in every.get(i, []) if s not in first.get(i, [])]
            for i in image_ids
        }

    def image(self, image_id: str) -> tuple[str, bytes] | None:
        """(media type, bytes) of a stored image, or None; read a few rows at a time, so only
        the rows up to the image are held."""
        table = self.run.table(ImageRecord)
        for rows in table.batches(["image_id", "format", "bytes"], batch_size=16):
            ids = rows.column(0).to_pylist()
            if image_id in ids:
                row = ids.index(image_id)
                fmt, raw = rows.column(1)[row].as_py(), rows.column(2)[row].as_py()
                return MEDIA_TYPES.get(fmt, "application/octet-stream"), raw
        return None

    def clip(self, clip_id: str) -> tuple[str, bytes] | None:
        """(media type, bytes) of a stored clip, or None."""
        for rows in self.run.table(ClipRecord).batches(["clip_id", "container", "bytes"], 4):
            ids = rows.column(0).to_pylist()
            if clip_id in ids:
                row = ids.index(clip_id)
                container = rows.column(1)[row].as_py()
                media = CLIP_TYPES.get(container, "video/mp4")
                return media, rows.column(2)[row].as_py()
        return None

    def overlays(self, candidates: list[CandidateRecord]) -> dict[str, list[dict[str, Any]]]:
        """question_id -> the shapes of its evidence overlay (`evidence.overlay_shapes`)."""
        images = {c.image_id for c in candidates}
        facts: dict[str, list[VisualFactsRecord]] = defaultdict(list)
        for f in self.visual_facts():
            if f.image_id in images:
                facts[f.image_id].append(f)
        return {
            c.question_id: overlay_shapes(c.evidence, facts.get(c.image_id, [])) for c in candidates
        }

    def samples(
        self, batch: ReviewBatchRecord, offset: int = 0, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """The batch's samples from `offset` (at most `limit`), in the batch's order, as the
        desk shows them (`samples.batch_samples`)."""
        return batch_samples(self, batch, offset, limit)

    def conflicts(self) -> list[dict[str, Any]]:
        """The adjudicator's queue (`conflicts.open_conflicts`)."""
        return open_conflicts(self)

    def progress(
        self, batch: ReviewBatchRecord, decided_pairs: set[tuple[str, str]] | None = None
    ) -> dict[str, Any]:
        pairs = self.decided_pairs() if decided_pairs is None else decided_pairs
        decided = sum(1 for q in batch.question_ids if (q, batch.reviewer) in pairs)
        return {
            "batch_id": batch.batch_id,
            "reviewer": batch.reviewer,
            "dimension": batch.dimension,
            "language": batch.language,
            "part": batch.part,
            "cross_check": batch.cross_check,
            "decided": decided,
            "total": len(batch.question_ids),
        }

    def asked_nothing(self) -> list[dict[str, Any]]:
        """The pictures the build asked nothing at all, each with why (the `not_asked` table):
        what an annotator looks for when a picture they expected is not in any batch."""
        return [
            {"source": source, "reasons": reasons}
            for source, reasons in asked_nothing(self.run).items()
        ]

    def all_progress(self) -> list[dict[str, Any]]:
        pairs = self.decided_pairs()
        return [self.progress(b, pairs) for b in self.batches()]

    def reviewer(self, name: str) -> dict[str, Any] | None:
        """A reviewer's page (`reviewers.reviewer_summary`), or None for an unknown name."""
        from benchfoundry.decisions.outcomes import latest
        from benchfoundry.decisions.status import review_status
        from benchfoundry.tasks.review.app.reviewers import reviewer_summary

        reviews = self.reviews()
        return reviewer_summary(name, reviews, latest(reviews), review_status(self.run, self.store))
