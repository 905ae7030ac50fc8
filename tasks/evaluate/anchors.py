"""A small anchor set (`evaluate --subset anchors:K`, tinyBenchmarks' method): K items chosen
from an item analysis (`items.parquet`, written by `benchfoundry report`) stand for the whole
release, and a model asked only those gets an estimate of its accuracy on all of it.

The anchors: the items (suspects left out) clustered by their IRT parameters (discrimination,
difficulty, standardised) into K groups with k-means (scikit-learn); each group's anchor is the
item nearest its centre and weighs as many items as the group holds. Two estimates:
- `weighted`: the anchors' right answers weighted by their groups' sizes;
- `irt` (tinyBenchmarks' p-IRT): the model's ability fitted to its anchor answers with the
  items' parameters held fixed, then the anchors as answered plus every other item's predicted
  chance of a right answer. Its 95% interval carries the ability's uncertainty (the accuracy at
  the ability's interval ends) and the chance left in the unasked items (their Bernoulli
  variance), added in quadrature.
Both estimate first-pass (vanilla) accuracy, the unit of the item analysis."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from pydantic import BaseModel
from scipy.optimize import minimize_scalar

from benchfoundry.core.errors import UserError
from benchfoundry.tasks.evaluate.irt import PRIOR_THETA
from benchfoundry.tasks.evaluate.stats import Z95

SUBSET = re.compile(r"^anchors:(\d+)$")


class AnchorError(UserError, ValueError):
    """An anchor subset that cannot be drawn: no item analysis, another dataset, too few items."""


class AnchorEstimate(BaseModel):
    model: str
    with_image: bool
    anchors: int  # answered of the anchor set
    items: int  # the release's items the estimate stands for
    anchor_accuracy: float  # plain share right on the anchors
    weighted: float  # the anchors weighted by their groups' sizes
    irt: float  # p-IRT: answered anchors plus the others' predicted chance
    low: float
    high: float
    ability: float


@dataclass(frozen=True)
class ItemParameters:
    question_ids: list[str]
    discrimination: np.ndarray
    intercept: np.ndarray
    difficulty: np.ndarray
    suspect: np.ndarray
    dataset: str
    version: str | None


def parse_subset(text: str) -> int:
    found = SUBSET.match(text.strip())
    if not found or int(found.group(1)) < 1:
        raise AnchorError(f"--subset {text!r}: give anchors:K with K a positive number")
    return int(found.group(1))


def read_parameters(path: Path) -> ItemParameters:
    """The fitted English items of an `items.parquet` (those the analysis could fit): each
    language is fitted on its own scale, so a bilingual release's anchors are English items
    (a file without `language` is all English)."""
    if not path.is_file():
        raise AnchorError(
            f"{path} does not exist: anchors come from an item analysis; run benchfoundry "
            "report on evaluations of this release first, or name its items.parquet (--items)"
        )
    rows = [
        r
        for r in pq.read_table(path).to_pylist()
        if r.get("discrimination") is not None and r.get("language") in (None, "en")
    ]
    if not rows:
        raise AnchorError(f"{path}: no item was fitted (the analysis had too few respondents)")
    a = np.array([r["discrimination"] for r in rows])
    b = np.array([r["difficulty"] for r in rows])
    return ItemParameters(
        question_ids=[r["question_id"] for r in rows],
        discrimination=a,
        intercept=-a * b,
        difficulty=b,
        suspect=np.array([bool(r["suspect"]) for r in rows]),
        dataset=rows[0]["dataset"],
        version=rows[0]["version"],
    )


def choose(params: ItemParameters, k: int, seed: int = 0) -> dict[str, float]:
    """question id -> weight (the items its group holds) of `k` anchors."""
    from sklearn.cluster import KMeans

    sound = np.flatnonzero(~params.suspect)
    if k > len(sound):
        raise AnchorError(
            f"anchors:{k} asks for more anchors than the {len(sound)} sound items the analysis "
            "fitted; ask them all instead"
        )
    points = np.column_stack([params.discrimination[sound], params.difficulty[sound]])
    points = (points - points.mean(0)) / np.where(points.std(0) > 0, points.std(0), 1.0)
    groups = KMeans(n_clusters=k, n_init=10, random_state=seed).fit(points)
    out: dict[str, float] = {}
    for g in range(k):
        members = np.flatnonzero(groups.labels_ == g)
        nearest = members[np.argmin(((points[members] - groups.cluster_centers_[g]) ** 2).sum(1))]
        out[params.question_ids[sound[nearest]]] = float(len(members))
    return out


def _chance(theta: float, a: np.ndarray, d: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(a * theta + d)))


def ability(answers: dict[str, bool], params: ItemParameters) -> tuple[float, float]:
    """A respondent's ability from its answers, the items' parameters held fixed (MAP with the
    fit's prior), and its standard error."""
    index = {q: j for j, q in enumerate(params.question_ids)}
    seen = [index[q] for q in answers if q in index]
    y = np.array([float(answers[params.question_ids[j]]) for j in seen])
    a, d = params.discrimination[seen], params.intercept[seen]

    def loss(theta: float) -> float:
        p = np.clip(_chance(theta, a, d), 1e-9, 1 - 1e-9)
        return -(y * np.log(p) + (1 - y) * np.log(1 - p)).sum() + theta**2 / (2 * PRIOR_THETA**2)

    theta = float(minimize_scalar(loss, bounds=(-8, 8), method="bounded").x)
    p = _chance(theta, a, d)
    info = float((a**2 * p * (1 - p)).sum()) + 1 / PRIOR_THETA**2
    return theta, 1 / math.sqrt(info)


def estimate(
    model: str, with_image: bool, answers: dict[str, bool], weights: dict[str, float],
    params: ItemParameters,
) -> AnchorEstimate:  # fmt: skip
    """The full-release accuracy of a model from its answers on the anchors."""
    asked = {q: answers[q] for q in weights if q in answers}
    if not asked:
        raise AnchorError(f"{model} answered none of the anchors")
    theta, se = ability(asked, params)
    rest = np.array([q not in asked for q in params.question_ids])
    a, d = params.discrimination[rest], params.intercept[rest]
    n = len(params.question_ids)

    def at(t: float) -> float:
        return (sum(asked.values()) + float(_chance(t, a, d).sum())) / n

    p = _chance(theta, a, d)
    spread = math.sqrt(float((p * (1 - p)).sum())) / n
    lo, hi = sorted((at(theta - Z95 * se), at(theta + Z95 * se)))
    mid = at(theta)
    total = sum(weights[q] for q in asked)
    return AnchorEstimate(
        model=model,
        with_image=with_image,
        anchors=len(asked),
        items=n,
        anchor_accuracy=sum(asked.values()) / len(asked),
        weighted=sum(weights[q] * asked[q] for q in asked) / total,
        irt=mid,
        low=max(0.0, mid - math.hypot(mid - lo, Z95 * spread)),
        high=min(1.0, mid + math.hypot(hi - mid, Z95 * spread)),
        ability=theta,
    )


def anchor_lines(anchors: list[AnchorEstimate], table: str) -> list[str]:
    """The anchor estimates, as the evaluation's summary shows them: as a Markdown table
    (`table` "| ") or as lines."""
    if not anchors:
        return []
    first = anchors[0]
    head = (
        f"Asked {first.anchors} anchor items standing for the release's {first.items} "
        "(tinyBenchmarks); estimated first-pass accuracy on all of them:"
    )
    if table:
        rows = [
            f"| {_setting_label(a)} | {a.anchors} | {a.anchor_accuracy:.1%} | {a.weighted:.1%} | "
            f"{a.irt:.1%} [{a.low:.1%}, {a.high:.1%}] |"
            for a in anchors
        ]
        return [
            head,
            "",
            "| model | anchors | on the anchors | weighted | IRT estimate [95% CI] |",
            "|---|---|---|---|---|",
            *rows,
        ]
    return [head] + [
        f"  {_setting_label(a)}: {a.irt:.1%} [{a.low:.1%}, {a.high:.1%}] (weighted anchors "
        f"{a.weighted:.1%}, {a.anchor_accuracy:.1%} right on the {a.anchors} anchors)"
        for a in anchors
    ]


def _setting_label(a: AnchorEstimate) -> str:
    return a.model + ("" if a.with_image else " (no image)")
