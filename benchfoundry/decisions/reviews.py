"""Review decisions, shared by the review stage, the review app and the CLI: checking a decision
before it is stored (a refused one changes nothing), the latest decision per reviewer, conflicts
and adjudication, and the agreement between reviewers (Cohen's kappa per pair and per dimension,
Krippendorff's alpha over all). The automatic reviewer, `auto`, is never counted as a person."""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from benchfoundry.core.errors import UserError
from benchfoundry.core.ids import content_hash
from benchfoundry.core.letters import LETTERS, is_letter_of
from benchfoundry.core.records import (
    REVIEW_DECISIONS,
    CandidateRecord,
    ReviewBatchRecord,
    ReviewRecord,
    TranslationRecord,
)
from benchfoundry.decisions.outcomes import (
    AUTO,
    as_decided,
    english_change,
    latest,
    outcome,
    verdict,
    why_outdated,
)
from benchfoundry.decisions.status import PairAgreement, ReviewStatus
from benchfoundry.decisions.store import ReviewStore
from benchfoundry.decisions.twins import (
    TWIN_DECISIONS,
    language_of,
    review_items,
    twin_parts,
    twin_review_id,
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


# --- state, conflicts, agreement --------------------------------------------------------------


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's kappa, as scikit-learn's `cohen_kappa_score` defines it (unweighted: observed
    agreement against the agreement the two raters' own label frequencies give by chance);
    None where it is undefined (one category only). Counted here rather than through
    scikit-learn, whose import alone takes more than a second of `review status` (a test checks
    the two agree)."""
    if not a or len(a) != len(b) or len(set(a) | set(b)) < 2:
        return None
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    left, right = Counter(a), Counter(b)
    expected = sum(left[c] * right[c] for c in left) / (n * n)
    if expected == 1:
        return None
    return round((observed - expected) / (1 - expected), 4)


def krippendorff_alpha(units: Sequence[Sequence[str]]) -> float | None:
    """Krippendorff's alpha for nominal data over units with two or more values (any number of
    reviewers, missing values allowed); None where it is undefined."""
    coincidences: Counter[tuple[str, str]] = Counter()
    for values in units:
        m = len(values)
        if m < 2:
            continue
        for i, j in ((i, j) for i in range(m) for j in range(m) if i != j):
            coincidences[(values[i], values[j])] += 1 / (m - 1)
    totals: Counter[str] = Counter()
    for (c, _), w in coincidences.items():
        totals[c] += w
    n = sum(totals.values())
    expected = sum(totals[c] * totals[k] for c in totals for k in totals if c != k)
    if n <= 1 or expected == 0:
        return None
    observed = sum(w for (c, k), w in coincidences.items() if c != k)
    return round(1 - (n - 1) * observed / expected, 4)


def _language(item_id: str) -> str:
    return twin_parts(item_id)[1] or "en"


def _pooled(people: list[str], xs: list[str], ys: list[str]) -> PairAgreement:
    """Agreement over the pairs of verdicts of a group of items (a dimension, a language)."""
    same = sum(x == y for x, y in zip(xs, ys, strict=True))
    return PairAgreement(
        reviewers=people,
        items=len(xs),
        agreement=round(same / len(xs), 4) if xs else None,
        kappa=cohen_kappa(xs, ys),
    )


def status(run: RunFolder, store: ReviewStore | None = None) -> ReviewStatus:
    """Progress per reviewer and batch, conflicts, stale decisions and agreement (people only),
    from the run's review database."""
    store = store or ReviewStore.open(run)
    # the candidates' columns status needs, without a model per row; twins as items of theirs
    columns = ["question_id", "question", "hint", "options", "answer", "dimension"]
    table = run.table(CandidateRecord)
    rows = table.read(columns=columns).to_pylist() if table.exists() else []
    dimension_of = {r["question_id"]: r["dimension"] for r in rows}
    twins = run.table(TranslationRecord)
    for t in twins.read(columns=columns[:5] + ["language"]).to_pylist() if twins.exists() else []:
        if t["question_id"] in dimension_of:
            t["dimension"] = dimension_of[t["question_id"]]
            t["question_id"] = twin_review_id(t["question_id"], t["language"])
            rows.append(t)
            dimension_of[t["question_id"]] = t["dimension"]
    content_of = {
        r["question_id"]: shown_hash(
            r["question"], r["hint"], r["options"], r["answer"], r["dimension"]
        )
        for r in rows
    }
    reviews = store.records()
    every_batch = batches(run, store)
    current = latest(reviews)
    batch_rows, per_reviewer = [], defaultdict(lambda: Counter())
    for b in every_batch:
        decided = sum(1 for q in b.question_ids if b.reviewer in current.get(q, {}))
        batch_rows.append(
            {
                "batch_id": b.batch_id,
                "reviewer": b.reviewer,
                "dimension": b.dimension,
                "language": b.language,
                "part": b.part,
                "cross_check": b.cross_check,
                "decided": decided,
                "total": len(b.question_ids),
            }
        )
        per_reviewer[b.reviewer]["decided"] += decided
        per_reviewer[b.reviewer]["total"] += len(b.question_ids)
    states: Counter[str] = Counter()
    conflicts = []
    asked = {q for b in every_batch for q in b.question_ids} | set(current)
    for qid in sorted(asked):
        state, _ = outcome(current.get(qid, {}))
        states[state] += 1
        if state == "conflict":
            conflicts.append(qid)
    stale = sorted(
        f"{r.question_id} ({r.reviewer})"
        for by in current.values()
        for r in by.values()
        if r.question_id in content_of and r.candidate_hash != content_of[r.question_id]
    )
    people = sorted({r.reviewer for r in reviews if r.reviewer != AUTO and not r.adjudication})
    pairs = []
    pooled: dict[str, tuple[list[str], list[str]]] = defaultdict(lambda: ([], []))
    pooled_language: dict[str, tuple[list[str], list[str]]] = defaultdict(lambda: ([], []))
    shared: dict[tuple[str, str], list[str]] = defaultdict(list)  # a pair's common questions
    for q, by in current.items():
        here = sorted(n for n, r in by.items() if n != AUTO and not r.adjudication)
        for pair in combinations(here, 2):
            shared[pair].append(q)
    for a, b in combinations(people, 2):
        both = shared.get((a, b), [])
        va = [str(verdict(current[q][a])) for q in both]
        vb = [str(verdict(current[q][b])) for q in both]
        same = sum(x == y for x, y in zip(va, vb, strict=True))
        pairs.append(
            PairAgreement(
                reviewers=[a, b],
                items=len(both),
                agreement=round(same / len(both), 4) if both else None,
                kappa=cohen_kappa(va, vb),
            )
        )
        for q, x, y in zip(both, va, vb, strict=True):
            # per dimension the items' agreement, as before twins; each language's on its own
            into = [(_language(q), pooled_language)]
            if _language(q) == "en":
                into.append((dimension_of.get(q, "?"), pooled))
            for key, table in into:
                table[key][0].append(x)
                table[key][1].append(y)
    by_language: dict[str, dict[str, Any]] = defaultdict(lambda: {"states": Counter()})
    for qid in asked:
        by_language[_language(qid)]["states"][outcome(current.get(qid, {}))[0]] += 1
    for language, (xs, ys) in pooled_language.items():
        by_language[language]["agreement"] = _pooled(people, xs, ys)
    units = [
        [str(verdict(r)) for name, r in by.items() if name != AUTO and not r.adjudication]
        for by in current.values()
    ]
    return ReviewStatus(
        run=str(run.root),
        batches=batch_rows,
        per_reviewer={k: dict(v) for k, v in sorted(per_reviewer.items())},
        states=dict(sorted(states.items())),
        conflicts=conflicts,
        stale=stale,
        pairs=pairs,
        by_dimension={d: _pooled(people, xs, ys) for d, (xs, ys) in sorted(pooled.items())},
        by_language={
            k: {"states": dict(sorted(v["states"].items())), "agreement": v.get("agreement")}
            for k, v in sorted(by_language.items())
        },
        alpha=krippendorff_alpha(units),
        alpha_items=sum(1 for u in units if len(u) >= 2),
        decisions=sum(1 for r in reviews if r.reviewer != AUTO),
        auto_decisions=sum(1 for r in reviews if r.reviewer == AUTO),
    )
