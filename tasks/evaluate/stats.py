"""Accuracy with its uncertainty: Wilson score intervals for a proportion, and, where several
questions share an image (their answers are not independent), a cluster-robust interval with
the image as the cluster; multi-modal gain and leakage (MMStar)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from pydantic import BaseModel

Z95 = 1.959963984540054


class Accuracy(BaseModel):
    questions: int
    correct: int
    accuracy: float
    low: float  # Wilson 95% interval
    high: float
    clustered_low: float | None = None  # by image, where questions share images
    clustered_high: float | None = None

    @property
    def interval(self) -> tuple[float, float]:
        """The interval to show: where questions share images, the clustered one, never
        narrower than Wilson's on either side (at 0 or N of N every image agrees with the
        mean and the clustered variance is 0: no data supports that certainty); else Wilson."""
        if self.clustered_low is not None and self.clustered_high is not None:
            return min(self.clustered_low, self.low), max(self.clustered_high, self.high)
        return self.low, self.high

    @property
    def interval_kind(self) -> str:
        return "by image" if self.clustered_low is not None else "Wilson"


def wilson(correct: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of `correct` successes in `n`."""
    if n == 0:
        return 0.0, 1.0
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def clustered(outcomes: Sequence[tuple[str, bool]], z: float = Z95) -> tuple[float, float] | None:
    """A 95% interval for the accuracy of (cluster, correct) outcomes, robust to correlation
    within a cluster (the ratio estimator's sandwich variance with the small-sample factor
    C/(C-1)); None with fewer than two clusters."""
    by: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for cluster, correct in outcomes:
        by[cluster][0] += int(correct)
        by[cluster][1] += 1
    c = len(by)
    n = len(outcomes)
    if c < 2 or n == 0:
        return None
    p = sum(y for y, _ in by.values()) / n
    variance = sum((y - p * m) ** 2 for y, m in by.values()) / n**2 * c / (c - 1)
    half = z * math.sqrt(variance)
    return max(0.0, p - half), min(1.0, p + half)


def accuracy(outcomes: Sequence[tuple[str, bool]]) -> Accuracy:
    """Accuracy of (cluster, correct) outcomes, with the Wilson interval and, when some cluster
    holds more than one question, the clustered one."""
    n = len(outcomes)
    k = sum(correct for _, correct in outcomes)
    low, high = wilson(k, n)
    result = Accuracy(questions=n, correct=k, accuracy=k / n if n else 0.0, low=low, high=high)
    if len({cluster for cluster, _ in outcomes}) < n:
        interval = clustered(outcomes)
        if interval is not None:
            result.clustered_low, result.clustered_high = interval
    return result


def gain_and_leakage(s_v: float, s_wv: float, s_t: float) -> tuple[float, float]:
    """MMStar's multi-modal gain MG = S_v - S_wv and leakage ML = max(0, S_wv - S_t): a VLM with
    images (S_v) and without (S_wv), its base LLM without images (S_t)."""
    return s_v - s_wv, max(0.0, s_wv - s_t)


def accuracy_text(a: Accuracy | None) -> str:
    """An accuracy with the interval the legend names (by image where questions share one)."""
    if a is None:
        return "-"
    low, high = a.interval
    return f"{a.accuracy:.1%} [{low:.1%}, {high:.1%}]"
