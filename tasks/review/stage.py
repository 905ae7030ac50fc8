"""The review stage: the hand-off to people. Candidates that quality control selected or flagged
(the spec's `review.include`) are cut into batches per dimension and reviewer, flagged first and
then by hit count ascending (MMStar's order), with a share of each reviewer's samples given to a
second reviewer as a cross-check. Decisions come back through the review app, its JSON API or a
file into `reviews`, append-only (`benchfoundry/decisions/reviews.py` checks them and measures agreement)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from benchfoundry.core.batches import INLINE, Mapper
from benchfoundry.core.ids import content_hash
from benchfoundry.core.records import (
    CandidateRecord,
    ImageRecord,
    ReviewBatchRecord,
    ReviewRecord,
    ScoredRecord,
    TranslationRecord,
    VisualFactsRecord,
)
from benchfoundry.decisions.reviews import AUTO, candidate_hash, now
from benchfoundry.decisions.store import ReviewStore
from benchfoundry.decisions.suspects import read_suspects
from benchfoundry.decisions.twins import language_of, twin_candidates
from benchfoundry.extractors.agreement import agreement
from benchfoundry.extractors.frame import framed
from benchfoundry.storage.tables import RunFolder
from benchfoundry.storage.visual_context import current_facts
from benchfoundry.tasks.review.options import ReviewOptions
from benchfoundry.tasks.review.summary import ReviewSummary

if TYPE_CHECKING:  # the stage contract's type; stages import nothing above them
    from benchfoundry.pipeline.registry import StageRun


def _share(question_id: str, salt: str) -> float:
    """A stable number in [0, 1) for a question (the same on every export)."""
    return int(content_hash([salt, question_id], length=12), 16) / 16**12


# --- batches ------------------------------------------------------------------------------------


def _key(item: CandidateRecord) -> str:
    return item.question_id


def _order(scored: ScoredRecord) -> tuple[int, int, str]:
    return (
        0 if scored.decision == "flagged" else 1,
        scored.hits_text + scored.hits_vlm,
        scored.question_id,
    )


def plan(
    candidates: Sequence[CandidateRecord],
    scored: dict[str, ScoredRecord],
    options: ReviewOptions,
    earlier: Sequence[ReviewBatchRecord],
    spec_hash: str,
    suspects: dict[str, str] | None = None,
    language: str | None = None,
) -> tuple[list[ReviewBatchRecord], dict[str, int], int]:
    """New batches for the included candidates not yet in one of their reviewer's `earlier`
    batches; the dimensions no reviewer covers; how many questions are cross-checked. With
    `suspects` (question id -> why), those candidates instead, whatever their decision and
    whoever saw them before: they go back to people (the same suspects give the same batches).
    With `language`, the candidates are twins in that language (`decisions.twins`), batched
    for the reviewers who read it."""
    if suspects is not None:
        batched: set[tuple[str, str]] = set()
        included = [c for c in candidates if c.question_id in suspects and c.question_id in scored]
    else:
        batched = {(b.reviewer, q) for b in earlier for q in b.question_ids}
        included = [
            c
            for c in candidates
            if c.question_id in scored and scored[c.question_id].decision in options.include
        ]
    by_dimension: dict[str, list[CandidateRecord]] = defaultdict(list)
    for c in included:
        by_dimension[c.dimension].append(c)
    speaks = language or "en"
    readers = [r for r in options.reviewers if not r.languages or speaks in r.languages]
    people = [r.name for r in readers]
    assigned: dict[tuple[str, str, bool], list[str]] = defaultdict(list)
    unassigned: dict[str, int] = {}
    cross = 0
    for dimension in sorted(by_dimension):
        eligible = [r.name for r in readers if not r.dimensions or dimension in r.dimensions]
        if not eligible:
            where = dimension if language is None else f"{dimension} ({language})"
            unassigned[where] = len(by_dimension[dimension])
            continue
        ordered = sorted(by_dimension[dimension], key=lambda c: _order(scored[c.question_id]))
        for c in ordered:
            qid = c.question_id
            first = eligible[int(content_hash(["first", qid], length=8), 16) % len(eligible)]
            chosen = [(first, False)]
            if _share(qid, "cross") < options.cross_check and len(people) > 1:
                others = [r for r in eligible if r != first] or [r for r in people if r != first]
                chosen.append(
                    (others[int(content_hash(["second", qid], length=8), 16) % len(others)], True)
                )
                cross += 1
            for reviewer, is_cross in chosen:
                if (reviewer, qid) not in batched:
                    assigned[(reviewer, dimension, is_cross)].append(qid)
    created = now()
    batches = []
    # New batches continue the numbering of the reviewer's earlier ones in the dimension.
    parts = Counter((b.reviewer, b.dimension, b.language) for b in earlier)
    for (reviewer, dimension, is_cross), qids in sorted(assigned.items()):
        for start in range(0, len(qids), options.batch_size):
            chunk = qids[start : start + options.batch_size]
            parts[(reviewer, dimension, language)] += 1
            key = [reviewer, dimension, chunk] + (["suspects"] if suspects is not None else [])
            batches.append(
                ReviewBatchRecord(
                    batch_id=content_hash(key, length=16),
                    reviewer=reviewer,
                    dimension=dimension,
                    part=parts[(reviewer, dimension, language)],
                    question_ids=chunk,
                    cross_check=is_cross,
                    created_at=created,
                    spec_hash=spec_hash,
                    language=language,
                )
            )
    return batches, unassigned, cross


def image_sizes(run: RunFolder) -> dict[str, tuple[float, float]]:
    """Each stored image's width and height."""
    rows = run.table(ImageRecord).read(columns=["image_id", "width", "height"]).to_pylist()
    return {r["image_id"]: (float(r["width"]), float(r["height"])) for r in rows}


def on_unplain_regions(
    candidates: Sequence[CandidateRecord],
    facts: dict[str, VisualFactsRecord],
    sizes: dict[str, tuple[float, float]] | None = None,
) -> dict[str, str]:
    """Template questions whose image's facts do not (or no longer) support them: about objects,
    where the objects may not be counted, named or located (slivers, a photograph's unlabelled
    regions) or the two readings of them disagree or shapes are unclear; about text, where the
    two OCR readings share no whole line; or whose image has no facts to tell: question id ->
    why. The automatic reviewer leaves them to people, whatever quality control said. The facts
    are measured in the frame the generator measured them in (`framed`, from the image's size
    in `sizes`), so an image's size does not change what is withheld."""
    out = {}
    for c in candidates:
        if not c.generator.startswith("template:") or c.meta.get("video"):
            continue
        record = facts.get(c.image_id)
        if record is None:
            out[c.question_id] = "no_facts"
            continue
        if sizes and c.image_id in sizes:
            record, _ = framed(record, sizes[c.image_id])
        agreed = agreement(record)
        if c.generator == "template:read_text":
            why = agreed.lines_why_not or (None if agreed.lines else "extractors_disagree")
        else:
            why = agreed.objects_why_not or agreed.counts_why_not
        if why:
            out[c.question_id] = why
    return out


def auto_reviews(
    candidates: Sequence[CandidateRecord],
    scored: dict[str, ScoredRecord],
    done: set[tuple[str, str]],
    withheld: dict[str, str] | None = None,
    reason: str = "passed every automatic check (selected, no flags)",
) -> list[ReviewRecord]:
    """The automatic reviewer's acceptances: candidates that passed every automatic check
    (selected, no flag, not `withheld`), once per candidate content; twins with their
    English item's scores and `withheld`. No flag means that neither of the possibly-flawed
    flag's votes doubts the item: the evidence reader does not read its key otherwise, and
    some vision-language model answers it (a key the reader confirms is still left to people
    when no model answers it, and the reverse)."""
    decided = now()
    out = []
    for c in candidates:
        s = scored.get(c.question_id)
        if s is None or s.decision != "selected" or s.flags or c.question_id in (withheld or {}):
            continue
        digest = candidate_hash(c)
        if (c.question_id, digest) in done:
            continue
        out.append(
            ReviewRecord(
                question_id=c.question_id,
                reviewer=AUTO,
                decision="accept",
                reason=reason,
                tool="auto",
                candidate_hash=digest,
                decided_at=decided,
                language=language_of(c),
            )
        )
    return out


def export_batches(run_root: str, options: ReviewOptions, spec_hash: str) -> ReviewSummary:
    """The stage's one job: batches (and the automatic reviewer's decisions) into the run."""
    run = RunFolder(run_root)
    candidates = sorted(run.table(CandidateRecord).records(), key=lambda c: c.question_id)
    scored = {s.question_id: s for s in run.table(ScoredRecord).records()}
    batch_table = run.table(ReviewBatchRecord)
    stored = batch_table.records()
    suspects = read_suspects(options.suspects) if options.suspects else None
    batches, unassigned, cross = plan(candidates, scored, options, stored, spec_hash, suspects)
    twins = twin_candidates(
        {c.question_id: c for c in candidates}, run.table(TranslationRecord).records()
    )
    twin_scored = {
        q: scored[t.meta["twin_of"]].model_copy(update={"question_id": q})
        for q, t in twins.items()
        if t.meta["twin_of"] in scored
    }
    # A twin goes back with its English item (a key suspect), or alone: a translation suspect
    # is the twin's own review id, with its own why.
    twin_suspects = (
        {
            q: suspects[q] if q in suspects else suspects[t.meta["twin_of"]]
            for q, t in twins.items()
            if q in suspects or t.meta["twin_of"] in suspects
        }
        if suspects is not None
        else None
    )
    for language in sorted({t.meta["language"] for t in twins.values()}):
        of = sorted((t for t in twins.values() if language_of(t) == language), key=_key)
        more, left, crossed = plan(
            of, twin_scored, options, stored, spec_hash, twin_suspects, language
        )
        batches += more
        unassigned.update(left)
        cross += crossed
    written = batch_table.append(batches)
    known = {c.question_id for c in candidates if c.question_id in scored}
    auto_now: list[ReviewRecord] = []
    withheld: dict[str, str] = {}
    store = ReviewStore.open(run, options.database)
    if options.auto:
        done = {(r.question_id, r.candidate_hash) for r in store.records() if r.reviewer == AUTO}
        selected = [c for c in candidates if c.question_id in scored]
        withheld = {
            q: why
            for q, why in on_unplain_regions(selected, current_facts(run), image_sizes(run)).items()
            if scored[q].decision == "selected"
        }
        auto_now = auto_reviews(candidates, scored, done, withheld)
        auto_now += auto_reviews(
            sorted(twins.values(), key=_key),
            twin_scored,
            done,
            {q: "english_withheld" for q, t in twins.items() if t.meta["twin_of"] in withheld},
            reason="its English item passed every automatic check (selected, no flags) and the "
            "twin passed the translation checks",
        )
        store.add(auto_now)
    store.snapshot()
    every = stored + batches
    per_reviewer: Counter[str] = Counter()
    for b in every:
        per_reviewer[b.reviewer] += len(b.question_ids)
    auto_total = sum(1 for r in store.records() if r.reviewer == AUTO)
    included = (
        len(set(suspects) & known)
        if suspects is not None
        else sum(1 for s in scored.values() if s.decision in options.include)
    )
    return ReviewSummary(
        run=str(run.root),
        candidates=included,
        batches=len(every),
        batches_added=written.added,
        questions_batched_now=sum(len(b.question_ids) for b in batches),
        per_reviewer=dict(sorted(per_reviewer.items())),
        cross_checked=cross,
        unassigned=unassigned,
        auto_accepted=auto_total,
        auto_accepted_now=len(auto_now),
        auto_withheld=dict(Counter(withheld.values())),
        serve=f"benchfoundry review serve --out {run.root}",
        suspects={q: why for q, why in (suspects or {}).items() if q in known or q in twin_scored},
        suspects_unknown=sorted(set(suspects or {}) - known - set(twin_scored)),
        twins=dict(
            Counter(
                language_of(t)
                for q, t in twins.items()
                if q in twin_scored
                and (
                    q in twin_suspects
                    if twin_suspects is not None
                    else twin_scored[q].decision in options.include
                )
            )
        ),
    )


def run(stage: StageRun, mapper: Mapper = INLINE) -> ReviewSummary:
    """The whole stage: batches for people (one job), ready for the review app."""
    spec_hash = content_hash(stage.options.model_dump(mode="json"), length=16)
    args = (stage.run, stage.options.review, spec_hash)
    return next(mapper.map(export_batches, [(args, 1)], label="review batches"))
