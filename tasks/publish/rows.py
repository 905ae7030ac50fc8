"""The rows of a release: the candidates that review accepted, as decided (a fixed answer, an
edited question or options, a move to another dimension), with their quality-control figures,
the image's provenance and who decided. Every candidate that is not released is counted under
why (rejected, a conflict, no decision yet, a decision on content that has changed since...)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from benchfoundry.core.ids import content_hash
from benchfoundry.core.records import (
    CandidateRecord,
    ReviewRecord,
    ScoredRecord,
    TranslationRecord,
)
from benchfoundry.core.taxonomy import Taxonomy
from benchfoundry.decisions.outcomes import AUTO, english_change, latest, outcome
from benchfoundry.decisions.reviews import candidate_hash
from benchfoundry.decisions.twins import twin_candidate

SPLIT = "test"


class ReleaseRow(BaseModel):
    """One released question, without its image bytes (they are read once, when files are
    written). `index` is its place in the release."""

    index: int
    question_id: str
    image_id: str
    question: str
    hint: str | None
    options: list[str]
    answer: str
    category: str  # the dimension's top level (MMStar's `category`)
    l2_category: str  # its second level, or the dimension itself in a flat taxonomy
    dimension: str  # the dimension's path of ids, root first, joined with '/'
    hits_text: int | None
    hits_vlm: int | None
    difficulty: str | None
    source: str  # where the question came from (a generator, a seed file's row)
    generator: str
    prompt_id: str | None
    prompt_hash: str | None
    image_source: str
    image_format: str
    license: str | None
    reviewers: list[str]  # whose decision released it (`auto`: the automatic reviewer)
    review_decision: str  # accept, fix_answer, edit or move
    review_state: str  # decided (one person), agreed (several), adjudicated or auto
    human_reviewed: bool
    review_changes: list[str]  # what the decision changed: answer, question, options, dimension
    # A temporal question's clip; None for a question on an image. `clip_id`, `clip_start` and
    # `clip_end` are the source clip and the stretch of it the question may show (seconds); the
    # release holds that stretch alone, cut into a file of its own (`video`, `videos/<sha256>.mp4`,
    # set by `clips.with_cuts`), so `video_start` is 0 and `video_end` that file's duration.
    video: str | None = None
    video_start: float | None = None
    video_end: float | None = None
    clip_id: str | None = None
    clip_start: float | None = None
    clip_end: float | None = None
    video_source: str | None = None  # the source clip's name in its source
    video_frames: list[str] = []  # the keyframes sampled from the stretch, `frames/<id>.png`
    language: str = "en"  # BCP-47; a twin shares its English item's question_id and key

    def content(self) -> list[object]:
        """What a question is, for versions and the changes between them."""
        return [
            self.question_id,
            self.image_id,
            self.question,
            self.hint,
            self.options,
            self.answer,
            self.dimension,
        ]

    def digest(self) -> str:
        return content_hash(self.content(), length=16)


class ImageInfo(BaseModel):
    """What a release row says of its image (the bytes are read later, once)."""

    source: str
    format: str
    license: str | None


class Selection(BaseModel):
    """The release's rows, and every other candidate counted under why it is not in it."""

    rows: list[ReleaseRow]
    left_out: dict[str, int]  # reason -> candidates
    missing_images: list[str]  # question ids whose image is not in the run


def short_path(text: str, roots: Sequence[Path] = (), keep: int = 2) -> str:
    """A local path as a release shows it, with no folders of the machine that built it: from
    the source folder it lies in (`images/cat.jpg` under `/home/me/images`), else its last
    `keep` parts; a `#row` reference is kept, other references are left as they are."""
    path, hash_, ref = text.partition("#")
    if not path.startswith("/"):
        return text
    here = Path(path)
    for root in sorted(roots, key=lambda r: -len(r.parts)):
        if here.is_relative_to(root) and here != root:
            return f"{root.name}/{here.relative_to(root)}{hash_}{ref}"
    return "/".join(here.parts[-keep:]) + hash_ + ref


def _dimension_fields(taxonomy: Taxonomy, dimension: str) -> tuple[str, str, str]:
    try:
        path = taxonomy.path(dimension)
    except KeyError:
        return dimension, dimension, dimension  # the gate refuses it: not in the taxonomy
    names = [taxonomy.get(d).name for d in path]
    return names[0], names[1] if len(names) > 1 else names[0], "/".join(path)


def apply(candidate: CandidateRecord, decision: ReviewRecord) -> tuple[CandidateRecord, list[str]]:
    """The candidate as the decision leaves it, and what it changed."""
    update: dict[str, object] = {}
    if decision.decision == "fix_answer":
        update["answer"] = decision.new_answer
    elif decision.decision == "edit":
        if decision.new_question is not None:
            update["question"] = decision.new_question
        if decision.new_options is not None:
            update["options"] = decision.new_options
        if decision.new_answer is not None:
            update["answer"] = decision.new_answer
    elif decision.decision == "move":
        update["dimension"] = decision.new_dimension
    changes = [k for k, v in update.items() if getattr(candidate, k) != v]
    return candidate.model_copy(update=update), changes


def video_fields(meta: dict[str, str]) -> dict[str, object]:
    """A clip question's source clip and stretch from its candidate's `meta` (none for an
    image's): the stretch generate decided the question may show (a prediction's shown steps,
    never its answer). Its file in the release comes when the stretch is cut (`clips.py`)."""
    if "clip_id" not in meta:
        return {}
    return {
        "clip_start": float(meta["start"]),
        "clip_end": float(meta["end"]),
        "clip_id": meta["clip_id"],
        "video_source": meta.get("video"),
        "video_frames": [f"frames/{f}.png" for f in meta.get("frames", "").split(",") if f],
    }


def settle(
    item: CandidateRecord, decisions: dict[str, ReviewRecord], include_auto: bool
) -> tuple[str | None, ReviewRecord | None, str, list[str]]:
    """(why the item is not released, or None; the decision that counts; the review state;
    who decided) from the latest decisions on an item. No counting decision and no reason:
    nobody decided yet."""
    state, counting = outcome(decisions)
    if state == "conflict":
        return "reviewers disagree (not adjudicated)", None, state, []
    if counting is None:
        return None, None, state, []
    counted = [counting] + [r for n, r in decisions.items() if state == "agreed" and n != AUTO]
    if any(r.candidate_hash != candidate_hash(item) for r in counted):
        return "decided on content that has changed since", None, state, []
    if counting.decision == "reject":
        return "rejected", None, state, []
    if state == "auto" and not include_auto:
        why = "accepted by the automatic reviewer only (publish needs allow_unreviewed)"
        return why, None, state, []
    if state == "agreed":
        who = sorted(n for n, r in decisions.items() if n != AUTO and not r.adjudication)
    else:
        who = [counting.reviewer]
    return None, counting, state, who


def _rewritten(counting: ReviewRecord | None, english: dict[str, ReviewRecord]) -> bool:
    """Whether a twin's deciding decision wrote it again after its English item changed in
    review: a person's edit made after that change (its key is checked against the item's)."""
    change = english_change(english)
    return (
        counting is not None
        and change is not None
        and counting.decision == "edit"
        and counting.reviewer != AUTO
        and counting.decided_at > change.decided_at
    )


def twin_rows(
    rows: Sequence[ReleaseRow],
    twins: Sequence[TranslationRecord],
    candidates: dict[str, CandidateRecord],
    reviews: Sequence[ReviewRecord],
    include_auto: bool,
) -> tuple[list[ReleaseRow], Counter[str]]:
    """The released English rows' twins (each with its English item's index and question id,
    as MMBench's CN file pairs with its EN file), and why others are left out: a
    twin is released only beside its English item, with its key, written from the item as it was
    released (a move to another dimension changes neither) or written again by a person after the
    item changed in review, and as its own review decided (an edit of its text applied; accepted by the
    automatic reviewer only with `include_auto`, which the row's `review_state` says)."""
    by_key = {(t.question_id, t.language): t for t in twins}
    current = latest(r for r in reviews if r.language is not None)
    english = latest(r for r in reviews if r.language is None)
    out: list[ReleaseRow] = []
    left: Counter[str] = Counter()
    for language in sorted({t.language for t in twins}):
        for r in rows:
            twin = by_key.get((r.question_id, language))
            if twin is None:
                left[f"{language}: no twin (refused or not translated)"] += 1
                continue
            item = twin_candidate(candidates[r.question_id], twin)
            why, counting, state, who = settle(
                item, current.get(item.question_id, {}), include_auto
            )
            outdated = twin.answer != r.answer or set(r.review_changes) - {"dimension"}
            if outdated and not _rewritten(counting, english.get(r.question_id, {})):
                left[
                    f"{language}: the English item changed in review after its twin was written"
                ] += 1
                continue
            if counting is None:
                left[f"{language}: twin {why or 'not decided in review yet'}"] += 1
                continue
            final, changes = apply(item, counting)
            if final.answer != r.answer:  # a twin always keeps its English item's key
                left[f"{language}: twin's key differs from its English item's"] += 1
                continue
            out.append(
                r.model_copy(
                    update={
                        "language": language,
                        "question": final.question,
                        "hint": final.hint or None,
                        "options": list(final.options),
                        "reviewers": who,
                        "review_decision": counting.decision,
                        "review_state": state,
                        "human_reviewed": state != "auto",
                        "review_changes": changes,
                        "generator": f"{r.generator} -> {twin.method}",
                    }
                )
            )
    return out, left


def frame_ids(rows: Sequence[ReleaseRow]) -> set[str]:
    """The image ids of every keyframe the rows' clips carry."""
    return {Path(f).stem for r in rows for f in r.video_frames}


def select(
    candidates: Sequence[CandidateRecord],
    scored: dict[str, ScoredRecord],
    reviews: Sequence[ReviewRecord],
    images: dict[str, ImageInfo],
    taxonomy: Taxonomy,
    include_auto: bool,
    batched: set[str],
    roots: Sequence[Path] = (),
) -> Selection:
    """The released rows in index order (by dimension path, then question id). Questions that
    only the automatic reviewer accepted are released only with `include_auto`; `batched` are
    the questions handed to people (in a review batch)."""
    current = latest(reviews)
    left: Counter[str] = Counter()
    kept: list[tuple[CandidateRecord, ReviewRecord, str, list[str], list[str]]] = []
    missing = []
    for c in candidates:
        decisions = current.get(c.question_id, {})
        why, counting, state, who = settle(c, decisions, include_auto)
        if why is not None:
            left[why] += 1
            continue
        if counting is None:
            if c.question_id in batched:
                left["in a review batch, no decision yet"] += 1
            else:
                qc = scored[c.question_id].decision if c.question_id in scored else "unassessed"
                left[f"not sent to review (quality control: {qc})"] += 1
            continue
        if c.image_id not in images:
            missing.append(c.question_id)
            continue
        final, changes = apply(c, counting)
        kept.append((final, counting, state, who, changes))
    rows = []
    placed = sorted(
        kept, key=lambda k: (_dimension_fields(taxonomy, k[0].dimension)[2], k[0].question_id)
    )
    for index, (c, decision, state, who, changes) in enumerate(placed):
        category, l2, path = _dimension_fields(taxonomy, c.dimension)
        s = scored.get(c.question_id)
        image = images[c.image_id]
        rows.append(
            ReleaseRow(
                index=index,
                question_id=c.question_id,
                image_id=c.image_id,
                question=c.question,
                hint=c.hint or None,
                options=list(c.options),
                answer=c.answer,
                category=category,
                l2_category=l2,
                dimension=path,
                hits_text=s.hits_text if s else None,
                hits_vlm=s.hits_vlm if s else None,
                difficulty=s.difficulty if s else None,
                source=short_path(c.source, roots),
                generator=c.generator,
                prompt_id=c.prompt_id,
                prompt_hash=c.prompt_hash,
                image_source=short_path(image.source, roots),
                image_format=image.format,
                license=image.license,
                reviewers=who,
                review_decision=decision.decision,
                review_state=state,
                human_reviewed=state != "auto",
                review_changes=changes,
                **video_fields(c.meta),
            )
        )
    return Selection(rows=rows, left_out=dict(sorted(left.items())), missing_images=missing)
