"""Review decisions, shared by the review stage, the review app and the CLI: checking a decision
before it is stored (a refused one changes nothing), the latest decision per reviewer, conflicts
and adjudication, and the agreement between reviewers (Cohen's kappa per pair and per dimension,
Krippendorff's alpha over all). The automatic reviewer, `auto`, is never counted as a person."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchfoundry.core.errors import UserError
from benchfoundry.core.ids import content_hash
from benchfoundry.core.letters import LETTERS, is_letter_of
from benchfoundry.core.records import (
    REVIEW_DECISIONS,
    CandidateRecord,
    ReviewBatchRecord,
    ReviewRecord,
)
from benchfoundry.decisions.outcomes import (
    AUTO,
    as_decided,
    english_change,
    verdict,
    why_outdated,
)
from benchfoundry.decisions.store import ReviewStore
from benchfoundry.decisions.twins import (
    TWIN_DECISIONS,
    language_of,
    review_items,
    twin_parts,
)
from benchfoundry.storage.tables import RunFolder


class ReviewError(UserError, ValueError):
    """A decision that cannot be stored: the message says why; nothing was changed."""


def now() -> str:
    """The time, to the nanosecond, from one clock reading (so that decisions sort in order)."""
    ns = time.time_ns()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ns // 10**9)) + f".{ns % 10**9:09d}Z"


def candidate_hash(candidate: CandidateRecord) -> str:
    """What a reviewer saw: question, hint, options, answer and dimension."""
    return shown_hash(
        candidate.question, candidate.hint, candidate.options, candidate.answer, candidate.dimension
    )


def shown_hash(question: str, hint: str | None, options: Any, answer: str, dimension: str) -> str:
    """`candidate_hash` from the fields themselves (a row read as columns)."""
    return content_hash([question, hint, list(options), answer, dimension], length=16)


# --- decisions ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """A decision as a tool submits it, before it is checked."""

    question_id: str
    reviewer: str
    decision: str
    new_answer: str | None = None
    new_question: str | None = None
    new_options: list[str] | None = None
    new_dimension: str | None = None
    reason: str | None = None
    note: str | None = None
    batch_id: str | None = None
    lead_time_s: float | None = None
    decided_at: str | None = None
    adjudication: bool = False


def check(
    decision: Decision,
    candidate: CandidateRecord | None,
    tool: str,
    dimensions: Iterable[str] | Mapping[str, Iterable[str]] | None = None,
    english: Mapping[str, ReviewRecord] | None = None,
) -> ReviewRecord:
    """The stored record of a decision, or `ReviewError` saying why it cannot be stored. A move
    names one of `dimensions`; given by medium (`media_dimensions`), one of its own medium's.
    For a twin, `english` are the latest decisions on its English item (a twin written before
    that item changed in review is not accepted)."""
    texts = ("question_id", "reviewer", "decision", "new_answer", "new_question", "new_dimension")
    for name in (*texts, "reason", "note", "batch_id"):
        value = getattr(decision, name)
        if value is not None and not isinstance(value, str):
            raise ReviewError(f"{name} is text, not {type(value).__name__}")
    if decision.new_options is not None and not (
        isinstance(decision.new_options, list)
        and all(isinstance(o, str) for o in decision.new_options)
    ):
        raise ReviewError("new_options is a list of texts")
    if candidate is None:
        raise ReviewError(f"no candidate with question id '{decision.question_id}' in this run")
    if not decision.reviewer or decision.reviewer == AUTO and tool != "auto":
        raise ReviewError("give the reviewer's name (and not 'auto', the automatic reviewer's)")
    if decision.decision not in REVIEW_DECISIONS:
        raise ReviewError(
            f"decision '{decision.decision}' is not one of {', '.join(REVIEW_DECISIONS)}"
        )
    language = language_of(candidate)
    if language is not None:
        _check_twin(decision, candidate, english_change(english or {}))
    options = decision.new_options if decision.new_options is not None else candidate.options
    if decision.decision == "reject" and not (decision.reason or "").strip():
        raise ReviewError("a rejection needs a reason")
    if decision.decision == "fix_answer":
        letters = LETTERS[: len(options)]
        if not is_letter_of(decision.new_answer, len(options)):
            raise ReviewError(
                f"answer '{decision.new_answer}' is not one of the options' letters {', '.join(letters)}"
            )
        if decision.new_answer == candidate.answer:
            raise ReviewError(f"the answer is already {candidate.answer}: accept it instead")
    if decision.decision == "edit":
        if decision.new_question is None and decision.new_options is None:
            raise ReviewError(
                "an edit changes the question or an option: give new_question or new_options"
            )
        if decision.new_question is not None and not decision.new_question.strip():
            raise ReviewError("the edited question is empty")
        if decision.new_options is not None:
            distinct = {o.strip().casefold() for o in decision.new_options if o.strip()}
            if len(distinct) < 2 or len(distinct) != len(decision.new_options):
                raise ReviewError(
                    "the edited options must be at least two, each filled and different"
                )
            if len(decision.new_options) != len(candidate.options) and decision.new_answer is None:
                raise ReviewError("the number of options changed: give the answer letter too")
        if decision.new_answer is not None and not is_letter_of(decision.new_answer, len(options)):
            raise ReviewError(f"answer '{decision.new_answer}' is not one of the options' letters")
    if decision.decision == "move":
        if not decision.new_dimension:
            raise ReviewError("a move names the new dimension")
        if isinstance(dimensions, Mapping):  # medium -> its dimensions: a move stays on it
            medium = medium_of(candidate)
            own = set(dimensions.get(medium, ()))
            other = {d for ds in dimensions.values() for d in ds} - own
            if decision.new_dimension in other:
                raise ReviewError(
                    f"'{decision.new_dimension}' is a dimension of questions on another medium; "
                    f"a question on an {medium} moves only to one of: {', '.join(sorted(own))}"
                )
            dimensions = own
        if dimensions is not None and decision.new_dimension not in set(dimensions):
            raise ReviewError(f"'{decision.new_dimension}' is not a dimension of the taxonomy")
        if decision.new_dimension == candidate.dimension:
            raise ReviewError(f"the question is already in {candidate.dimension}")
    return ReviewRecord(
        question_id=candidate.question_id,
        reviewer=decision.reviewer,
        decision=decision.decision,  # type: ignore[arg-type]
        new_answer=decision.new_answer,
        new_question=decision.new_question,
        new_options=decision.new_options,
        new_dimension=decision.new_dimension,
        reason=decision.reason,
        note=decision.note,
        tool=tool,
        batch_id=decision.batch_id,
        candidate_hash=candidate_hash(candidate),
        decided_at=decision.decided_at or now(),
        lead_time_s=decision.lead_time_s,
        adjudication=decision.adjudication,
        language=language,
    )


def _check_twin(decision: Decision, twin: CandidateRecord, changed: ReviewRecord | None) -> None:
    """A twin keeps its English item's key, option count and dimension: it is accepted,
    rejected or its text edited. One written before its English item's text or key changed in
    review (`changed`) is not accepted: it is written again (an edit, taking the item's new
    key) or rejected."""
    english = twin_parts(twin.question_id)[0]
    if decision.decision not in TWIN_DECISIONS:
        raise ReviewError(
            f"a twin is accepted, rejected or edited ({', '.join(TWIN_DECISIONS)}); it keeps its "
            f"English item's key and dimension, so '{decision.decision}' is a decision on "
            f"{english}"
        )
    if changed is not None and decision.decision == "accept":
        raise ReviewError(why_outdated(english, changed))
    key = twin.answer if changed is None else as_decided("", [], twin.answer, changed).answer
    if decision.new_answer not in (None, key):
        raise ReviewError(f"a twin keeps its English item's key {key}")
    if decision.new_options is not None and len(decision.new_options) != len(twin.options):
        raise ReviewError(
            f"a twin keeps its English item's {len(twin.options)} options: edit their text"
        )


def run_dimensions(run: RunFolder) -> list[str]:
    """The dimensions a decision may move a question to: the leaves of the build's taxonomy (the
    manifest's spec; the default taxonomy for a folder built without `build`), or, when that
    taxonomy no longer loads, the dimensions the run's candidates use."""
    return sorted(d for ds in media_dimensions(run).values() for d in ds)


def medium_of(candidate: CandidateRecord) -> str:
    """`video` for a question on a clip (its `meta` names the clip), else `image`."""
    return "video" if "clip_id" in candidate.meta else "image"


def media_dimensions(run: RunFolder) -> dict[str, list[str]]:
    """`image` and `video` -> the dimensions a question on that medium may be moved to: the
    taxonomy's leaves whose questions are asked of a clip's segments (`needs: [segments]`,
    SEED-Bench's temporal three) for a video, the others for an image; the run's candidates'
    own dimensions by their medium when the taxonomy no longer loads (see `run_dimensions`)."""
    from benchfoundry.core.taxonomy import DEFAULT_TAXONOMY, TaxonomyError, load_taxonomy

    spec = run.read_manifest().get("build", {}).get("spec", {})
    out: dict[str, set[str]] = {"image": set(), "video": set()}
    try:
        for d in load_taxonomy(spec.get("taxonomy") or DEFAULT_TAXONOMY).leaves():
            out["video" if "segments" in d.needs else "image"].add(d.id)
    except (TaxonomyError, OSError):
        for c in run.table(CandidateRecord).records():
            out[medium_of(c)].add(c.dimension)
    return {medium: sorted(ds) for medium, ds in out.items()}


def record(
    run: RunFolder,
    decisions: Sequence[Decision],
    tool: str,
    dimensions: Iterable[str] | Mapping[str, Iterable[str]] | None = None,
    *,
    store: ReviewStore | None = None,
    candidates: Mapping[str, CandidateRecord] | None = None,
    role: str | None = None,
) -> tuple[int, int, list[str]]:
    """Check and store decisions in the run's review database, in one transaction; (added,
        already stored, refusals with their reasons). A refused decision changes nothing; the others
        are stored. A move must name one of `dimensions` (default: the run's by medium,
    `media_dimensions`, so a question moves only to a dimension of its own medium). A decision
        that repeats the reviewer's latest one on the same candidate content is already stored
        (importing a file twice changes nothing). `role` is the signed-in decider's role."""
    store = store or ReviewStore.open(run)
    if candidates is None:
        candidates = review_items(run)
    asked = {d.question_id for d in decisions}
    current = store.latest(asked | {twin_parts(q)[0] for q in asked})  # a twin's English item's
    dims: Iterable[str] | Mapping[str, Iterable[str]] = (
        dimensions if dimensions is not None else media_dimensions(run)
    )
    if not isinstance(dims, Mapping):
        dims = list(dims)
    good, refused, repeated = [], [], 0
    for d in decisions:
        try:
            english = current.get(twin_parts(d.question_id)[0], {})
            checked = check(d, candidates.get(d.question_id), tool, dims, english)
        except ReviewError as exc:
            refused.append(f"{d.question_id} ({d.reviewer}): {exc}")
            continue
        if role is not None:
            checked = checked.model_copy(update={"role": role})
        before = current.get(checked.question_id, {}).get(checked.reviewer)
        if before is not None and _same(before, checked):
            repeated += 1
            continue
        good.append(checked)
        current.setdefault(checked.question_id, {})[checked.reviewer] = checked
    added = store.add(good)
    return added, len(good) - added + repeated, refused


def batches(run: RunFolder, store: ReviewStore | None = None) -> list[ReviewBatchRecord]:
    """The run's review batches, each under the person it is assigned to now (`review assign`
    moves a batch to another user; otherwise its reviewer from the export)."""
    moved = (store or ReviewStore.open(run)).assignments()
    out = [
        b.model_copy(update={"reviewer": moved[b.batch_id]}) if b.batch_id in moved else b
        for b in run.table(ReviewBatchRecord).records()
    ]
    return sorted(out, key=lambda b: (b.reviewer, b.dimension, b.part, b.batch_id))


def _same(a: ReviewRecord, b: ReviewRecord) -> bool:
    return verdict(a) == verdict(b) and (a.reason, a.note, a.candidate_hash, a.adjudication) == (
        b.reason,
        b.note,
        b.candidate_hash,
        b.adjudication,
    )
