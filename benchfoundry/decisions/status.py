"""Where a review stands, from the run's review database: progress per reviewer and batch,
conflicts, stale decisions, and agreement between reviewers (Cohen's kappa per pair, per
dimension and per language, Krippendorff's alpha over all), as `review_status` counts it and
`status_markdown` writes it; shared by the review commands, the desk and the release's
provenance."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import combinations
from typing import Any

from pydantic import BaseModel

from benchfoundry.core.records import CandidateRecord, TranslationRecord
from benchfoundry.decisions.outcomes import AUTO, latest, outcome, verdict
from benchfoundry.decisions.reviews import batches, shown_hash
from benchfoundry.decisions.store import ReviewStore
from benchfoundry.decisions.twins import twin_parts, twin_review_id
from benchfoundry.storage.tables import RunFolder


class PairAgreement(BaseModel):
    reviewers: list[str]
    items: int
    agreement: float | None
    kappa: float | None


class ReviewStatus(BaseModel):
    run: str
    batches: list[dict[str, Any]]  # batch id, reviewer, dimension, decided, total
    per_reviewer: dict[str, dict[str, int]]  # reviewer -> decided, total
    states: dict[str, int]  # decided, agreed, conflict, adjudicated, auto, undecided
    conflicts: list[str]  # question ids
    stale: list[str]  # decisions on a candidate that changed since: "question_id (reviewer)"
    pairs: list[PairAgreement]
    by_dimension: dict[str, PairAgreement]
    # "en" and each twin language: {"states": state -> items, "agreement": PairAgreement | None}
    by_language: dict[str, dict[str, Any]] = {}
    alpha: float | None
    alpha_items: int
    decisions: int
    auto_decisions: int
    report: str | None = None


STATES_LEGEND = (
    "(decided: one person's decision, nobody to agree with; agreed: two or more people made the "
    "same decision; conflict: people disagree; adjudicated: an adjudicator settled it; auto: the "
    "automatic reviewer only)"
)


def _value(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _language_lines(state: ReviewStatus) -> list[str]:
    """Per language, when twins are reviewed too: states and the agreement of people."""
    if set(state.by_language) <= {"en"}:
        return []
    lines = [
        "",
        "| language | states | items | raw agreement | Cohen's kappa |",
        "|---|---|---|---|---|",
    ]
    for language, entry in state.by_language.items():
        states = ", ".join(f"{k} {v}" for k, v in entry["states"].items()) or "-"
        pair = entry.get("agreement")
        if isinstance(pair, dict):
            pair = PairAgreement(**pair)
        items, raw, kappa = (pair.items, pair.agreement, pair.kappa) if pair else (0, None, None)
        lines.append(f"| {language} | {states} | {items} | {_value(raw)} | {_value(kappa)} |")
    return lines


def status_markdown(state: ReviewStatus) -> str:
    lines = [
        "# Review status",
        "",
        f"{state.decisions} decisions by people, {state.auto_decisions} by the automatic reviewer.",
        "",
        "States: " + (", ".join(f"{k} {v}" for k, v in state.states.items()) or "nothing yet"),
        "",
        STATES_LEGEND,
        "",
        "| reviewer | decided | of |",
        "|---|---|---|",
        *(
            f"| {k} | {v.get('decided', 0)} | {v.get('total', 0)} |"
            for k, v in state.per_reviewer.items()
        ),
        "",
        "| batch | reviewer | dimension | decided | of |",
        "|---|---|---|---|---|",
        *(
            f"| `{b['batch_id']}`{' (cross-check)' if b['cross_check'] else ''} | {b['reviewer']} | "
            f"{b['dimension']}{' (' + b['language'] + ')' if b.get('language') else ''} {b['part']} | {b['decided']} | {b['total']} |"
            for b in state.batches
        ),
        "",
        "## Agreement",
        "",
        "| reviewers | items | raw agreement | Cohen's kappa |",
        "|---|---|---|---|",
        *(
            f"| {' / '.join(p.reviewers)} | {p.items} | {_value(p.agreement)} | {_value(p.kappa)} |"
            for p in state.pairs
        ),
        "",
        "| dimension | items | raw agreement | Cohen's kappa |",
        "|---|---|---|---|",
        *(
            f"| {d} | {p.items} | {_value(p.agreement)} | {_value(p.kappa)} |"
            for d, p in state.by_dimension.items()
        ),
        *_language_lines(state),
        "",
        f"Krippendorff's alpha over all reviewers: {_value(state.alpha)} ({state.alpha_items} items "
        "decided by two or more)",
    ]
    if state.conflicts:
        lines += [
            "",
            "## Conflicts (an adjudicator decides)",
            "",
            *(f"- `{q}`" for q in state.conflicts),
        ]
    if state.stale:
        lines += [
            "",
            "## Decisions on candidates that changed since",
            "",
            *(f"- {s}" for s in state.stale),
        ]
    return "\n".join(lines) + "\n"


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


def review_status(run: RunFolder, store: ReviewStore | None = None) -> ReviewStatus:
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
