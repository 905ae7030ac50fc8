"""Paired comparisons of models asked the same questions: for every pair, the accuracy difference
with a 95% interval from a paired bootstrap that resamples images (questions on one image are
not independent), the exact McNemar test on the questions where exactly one of the two is right,
Holm's correction over all the pairs of a board, and each model's rank range (the best and worst
rank it could take, given which pairs differ significantly after the correction).

Overlapping intervals of two models' accuracies are the wrong test for paired data: the paired
difference is far tighter (Miller, "Adding Error Bars to Evals", 2024). Tiny inputs get words,
not numbers: one model has no pair, too few images give no interval, no shared question gives
no test."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel

# question id -> (cluster: the image it is asked on, right under the board's metric)
Outcomes = dict[str, tuple[str, bool]]

RESAMPLES = 2000
SEED = 0  # fixed: the same results give the same intervals
ALPHA = 0.05
MIN_IMAGES = 10  # fewer images than this: too few to resample for an interval


class Comparison(BaseModel):
    """Model A against model B on the questions both answered (A is the one ranked higher)."""

    dataset: str
    with_image: bool
    metric: str  # circular or vanilla: what counts as right
    model_a: str
    model_b: str
    items: int  # questions both answered
    images: int  # the images those questions are asked on (the bootstrap's clusters)
    accuracy_a: float | None
    accuracy_b: float | None
    difference: float | None  # accuracy of A minus accuracy of B, on the shared questions
    low: float | None  # 95% paired bootstrap interval (None: too few images)
    high: float | None
    discordant: dict[str, int]  # a_right_b_wrong, b_right_a_wrong
    p_value: float | None  # exact McNemar (two-sided) on the discordant questions
    p_adjusted: float | None  # Holm, over every pair of the same board
    significant: bool = False  # p_adjusted < 0.05
    note: str | None = None  # why a number is missing


class RankRange(BaseModel):
    best: int
    worst: int

    def text(self) -> str:
        return str(self.best) if self.best == self.worst else f"{self.best}–{self.worst}"


class ComparisonSet(BaseModel):
    """The comparisons of one board (one dataset version, mode and image setting)."""

    comparisons: list[Comparison] = []
    ranks: dict[str, RankRange] = {}  # model -> its rank range
    notes: list[str] = []


def setting(with_image: bool) -> str:
    return "with the image" if with_image else "without the image"


def mcnemar_p(a_only: int, b_only: int) -> float:
    """The exact (binomial) McNemar p-value, two-sided, on the discordant counts."""
    from statsmodels.stats.contingency_tables import mcnemar

    return float(mcnemar([[0, a_only], [b_only, 0]], exact=True).pvalue)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of a family of p-values."""
    if not p_values:
        return []
    from statsmodels.stats.multitest import multipletests

    return [float(p) for p in multipletests(list(p_values), alpha=ALPHA, method="holm")[1]]


def paired_bootstrap(
    clusters: Sequence[str],
    a: Sequence[bool],
    b: Sequence[bool],
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> tuple[float, float] | None:
    """A 95% percentile interval for accuracy(a) - accuracy(b) on paired outcomes, resampling
    whole clusters (images) with replacement; None with fewer than MIN_IMAGES clusters."""
    names, index = np.unique(np.asarray(clusters, dtype=object).astype(str), return_inverse=True)
    c = len(names)
    if c < MIN_IMAGES:
        return None
    diff = np.bincount(index, weights=np.asarray(a, float) - np.asarray(b, float), minlength=c)
    size = np.bincount(index, minlength=c).astype(float)
    rng = np.random.default_rng(seed)
    found = []
    chunk = max(1, 2_000_000 // c)  # bounded memory however many images
    for start in range(0, resamples, chunk):
        draws = rng.integers(0, c, size=(min(chunk, resamples - start), c))
        found.append(diff[draws].sum(axis=1) / size[draws].sum(axis=1))
    low, high = np.percentile(np.concatenate(found), [2.5, 97.5])
    return float(low), float(high)


def paired_floor(
    a_only: int, b_only: int, n: int, z: float = 1.959963984540054
) -> tuple[float, float]:
    """Agresti and Min's interval for a paired difference (half a count added to each of the
    four cells): never zero-width, also where every item went one way, which a bootstrap's
    resamples cannot leave (they all give the same difference)."""
    n2 = n + 2
    b, c = a_only + 0.5, b_only + 0.5
    d = (b - c) / n2
    half = z * np.sqrt(max(0.0, (b + c) - (b - c) ** 2 / n2)) / n2
    return max(-1.0, float(d - half)), min(1.0, float(d + half))


def pair(
    name_a: str, a: Outcomes, name_b: str, b: Outcomes, dataset: str, with_image: bool, metric: str
) -> Comparison:
    """Two models on the questions both answered (not yet adjusted for the other pairs)."""
    shared = sorted(set(a) & set(b))
    right_a = [a[q][1] for q in shared]
    right_b = [b[q][1] for q in shared]
    a_only = sum(x and not y for x, y in zip(right_a, right_b, strict=True))
    b_only = sum(y and not x for x, y in zip(right_a, right_b, strict=True))
    clusters = [a[q][0] for q in shared]
    images = len(set(clusters))
    base = {
        "dataset": dataset,
        "with_image": with_image,
        "metric": metric,
        "model_a": name_a,
        "model_b": name_b,
        "items": len(shared),
        "images": images,
        "discordant": {"a_right_b_wrong": a_only, "b_right_a_wrong": b_only},
        "p_adjusted": None,
    }
    if not shared:
        return Comparison(
            **base, accuracy_a=None, accuracy_b=None, difference=None, low=None, high=None,
            p_value=None, note="no question answered by both: nothing to compare",
        )  # fmt: skip
    n = len(shared)
    interval = paired_bootstrap(clusters, right_a, right_b)
    if interval is not None:  # the bootstrap by image, never narrower than Agresti-Min's
        floor = paired_floor(a_only, b_only, n)
        interval = (min(interval[0], floor[0]), max(interval[1], floor[1]))
    note = None
    if interval is None:
        note = (
            f"only {images} image{'s' if images != 1 else ''}: too few to resample for an "
            f"interval (at least {MIN_IMAGES})"
        )
    return Comparison(
        **base,
        accuracy_a=sum(right_a) / n,
        accuracy_b=sum(right_b) / n,
        difference=(sum(right_a) - sum(right_b)) / n,
        low=interval[0] if interval else None,
        high=interval[1] if interval else None,
        p_value=mcnemar_p(a_only, b_only),
        note=note,
    )


def rank_ranges(models: Sequence[str], comparisons: Sequence[Comparison]) -> dict[str, RankRange]:
    """Each model's best rank (1 + the models significantly better) and worst (the number of
    models less those significantly worse)."""
    above = dict.fromkeys(models, 0)
    below = dict.fromkeys(models, 0)
    for c in comparisons:
        if not c.significant or c.difference is None or c.difference == 0:
            continue
        better, worse = (c.model_a, c.model_b) if c.difference > 0 else (c.model_b, c.model_a)
        above[worse] += 1
        below[better] += 1
    n = len(models)
    return {m: RankRange(best=1 + above[m], worst=n - below[m]) for m in models}


def compare(
    entries: Sequence[tuple[str, Outcomes]], dataset: str, with_image: bool, metric: str
) -> ComparisonSet:
    """Every pair of the models of one board (name, outcomes), Holm-adjusted together; models
    are taken best first (by their own accuracy), so model A is the higher ranked."""
    if not entries:
        return ComparisonSet()

    def own(outcomes: Outcomes) -> float:
        return sum(r for _, r in outcomes.values()) / len(outcomes) if outcomes else 0.0

    ordered = sorted(entries, key=lambda e: -own(e[1]))
    names = [name for name, _ in ordered]
    where = f"{dataset} ({metric}, {setting(with_image)})"
    if len(ordered) == 1:
        return ComparisonSet(
            ranks={names[0]: RankRange(best=1, worst=1)},
            notes=[f"{where}: only one model ({names[0]}), so no pair to compare"],
        )
    found = [
        pair(na, a, nb, b, dataset, with_image, metric)
        for i, (na, a) in enumerate(ordered)
        for nb, b in ordered[i + 1 :]
    ]
    tested = [c for c in found if c.p_value is not None]
    for c, p in zip(tested, holm([c.p_value for c in tested]), strict=True):  # type: ignore[misc]
        c.p_adjusted = p
        c.significant = p < ALPHA
    return ComparisonSet(
        comparisons=found, ranks=rank_ranges(names, found), notes=_notes(where, found)
    )


def _notes(where: str, found: Sequence[Comparison]) -> list[str]:
    """One note per reason, naming the pairs it holds for (or saying it holds for all)."""
    by: dict[str, list[Comparison]] = {}
    for c in found:
        if c.note:
            by.setdefault(c.note, []).append(c)
    out = []
    for note, pairs in by.items():
        which = (
            "every pair"
            if len(pairs) == len(found)
            else "; ".join(f"{c.model_a} and {c.model_b}" for c in pairs)
        )
        out.append(f"{where}: {note} ({which})")
    return out


# --- how comparisons read -----------------------------------------------------------------------

EXPLAINED = (
    "Paired comparisons on every question (one whose call failed counts wrong): the accuracy "
    "difference A − B with a 95% interval from a paired bootstrap that resamples images "
    f"({RESAMPLES} resamples, fixed seed), widened where narrower to Agresti and Min's interval "
    "(half a count added to each cell: never zero-width), the exact McNemar p-value on the questions exactly "
    "one of them got right, and that p-value Holm-adjusted over every pair of the board. Rank "
    "range: the best and worst rank a model could take given which pairs differ significantly "
    "(Holm-adjusted p < 0.05)."
)
HEADER = ["A", "B", "questions", "A − B [95% CI]", "A only / B only", "McNemar p", "Holm p"]


def _p(x: float | None) -> str:
    if x is None:
        return "-"
    return "< 0.0001" if x < 1e-4 else f"{x:.4f}"


def cells(c: Comparison) -> list[str]:
    if c.difference is None:
        difference = "-"
    elif c.low is None:
        difference = f"{c.difference:+.1%} (no interval: {c.images} images)"
    else:
        difference = f"{c.difference:+.1%} [{c.low:+.1%}, {c.high:+.1%}]"
    d = c.discordant
    return [
        c.model_a,
        c.model_b,
        str(c.items),
        difference,
        f"{d['a_right_b_wrong']} / {d['b_right_a_wrong']}",
        _p(c.p_value),
        _p(c.p_adjusted) + (" *" if c.significant else ""),
    ]


def boards(comparisons: Sequence[Comparison]) -> list[tuple[str, list[Comparison]]]:
    """The comparisons grouped by board (dataset, metric, image setting), in order."""
    out: dict[str, list[Comparison]] = {}
    for c in comparisons:
        out.setdefault(f"{c.dataset} ({c.metric}, {setting(c.with_image)})", []).append(c)
    return list(out.items())


def markdown_lines(comparisons: Sequence[Comparison], notes: Sequence[str]) -> list[str]:
    """The comparisons section of a Markdown report."""
    if not comparisons and not notes:
        return []

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("<", "&lt;")

    lines = ["## Paired comparisons", "", EXPLAINED, ""]
    for title, group in boards(comparisons):
        lines += [
            f"{title}:",
            "",
            "| " + " | ".join(HEADER) + " |",
            "|" + "---|" * len(HEADER),
            *("| " + " | ".join(cell(x) for x in cells(c)) + " |" for c in group),
            "",
        ]
    lines += [f"- {cell(n)}" for n in notes]
    return lines


def html_section(comparisons: Sequence[Comparison], notes: Sequence[str]) -> str:
    """The comparisons section of the HTML report (every value escaped)."""
    import html

    if not comparisons and not notes:
        return ""
    e = html.escape
    parts = [f"<h2>Paired comparisons</h2><p>{e(EXPLAINED)}</p>"]
    head = "".join(f"<th>{e(h)}</th>" for h in HEADER)
    for title, group in boards(comparisons):
        body = "".join(
            "<tr>" + "".join(f"<td>{e(x)}</td>" for x in cells(c)) + "</tr>" for c in group
        )
        parts.append(
            f"<h3>{e(title)}</h3><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        )
    if notes:
        parts.append("<ul>" + "".join(f"<li>{e(n)}</li>" for n in notes) + "</ul>")
    return "".join(parts)
