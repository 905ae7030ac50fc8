"""Probes of looking: does a model need the image it is asked about? `image-swap` asks every
question a second time with another image of the same dataset, the images paired by a fixed,
seeded derangement (no question gets its own image). A model that stays above chance with the
wrong image answers from the text alone (the question, the options, what it has learned), not
by looking.

The probe's answers are stored under their own evaluation configuration (`run_id`), so they
resume like any other and never mix with the real results. They are scored on the mode's metric
against the chance rate of the same questions, with a one-sided exact test: by chance, the number
right is a sum of independent trials, each at its question's chance rate (Poisson-binomial;
binomial when every question has the same number of options). The test treats questions as
independent, as McNemar's does; questions on one image make it somewhat optimistic."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Protocol

import numpy as np
from pydantic import BaseModel

from benchfoundry.core.ids import content_hash
from benchfoundry.tasks.evaluate.comparisons import Outcomes
from benchfoundry.tasks.evaluate.dataset import EvalDataset, EvalQuestion
from benchfoundry.tasks.evaluate.stats import Accuracy, accuracy

IMAGE_SWAP = "image-swap"
PROBES = {IMAGE_SWAP: "every question asked again with another image of the dataset"}
SEED = "image-swap/1"  # the derangement's seed: part of the probe, never changed silently
LEVEL = 0.05  # one-sided


class ProbeJob(Protocol):
    """What the probe's job did (the stage's `ModelRun`)."""

    model: str
    sees: str
    run_id: str
    asked: int
    reused: int
    unanswered: int
    calls_made: int


class SwapProbe(BaseModel):
    """One model asked with another question's image, beside its score with its own."""

    model: str
    sees: str
    run_id: str  # the probe's evaluation configuration (its own, not the real results')
    metric: str  # circular or vanilla: the mode's
    questions: int  # answered both with its own image and with another
    normal: float  # accuracy with its own image, on those questions
    swapped: Accuracy  # accuracy with another image
    chance: float  # the chance rate of those questions under the metric
    gap: float  # normal - swapped: what looking at the right image is worth
    p_value: float | None  # one-sided exact test of swapped > chance (None: nothing answered)
    above_chance: bool  # p_value < LEVEL: it answers without looking
    asked_now: int
    reused: int
    unanswered: int
    calls_made: int

    def sentence(self) -> str | None:
        """The plain warning for a model above chance without the right image."""
        if not self.above_chance:
            return None
        return (
            f"{self.model} stays above chance with another question's image "
            f"({self.swapped.accuracy:.1%} {self.metric} against chance {self.chance:.1%}, "
            f"p {self.p_value:.2g}): it answers without looking at the image."
        )


def swap_map(image_ids: Iterable[str], seed: str = SEED) -> dict[str, str]:
    """image id -> the image its questions are asked with: the images in a fixed order (a seeded
    hash of their ids), each given the next one's, the last the first's. With two images or
    more no image maps to itself; adding or removing an image changes only its neighbour's."""
    order = sorted(set(image_ids), key=lambda i: (content_hash([seed, i]), i))
    if len(order) < 2:
        return {}
    return dict(zip(order, order[1:] + order[:1], strict=True))


def swapped_questions(questions: Sequence[EvalQuestion]) -> list[EvalQuestion]:
    """The questions, each with another image of the set; their content ids are kept, so the
    probe's answers pair with the real ones."""
    images = {q.image_id: q.item.image for q in questions}
    to = swap_map(images)
    if not to:
        raise ValueError("the image-swap probe needs at least two images")
    return [
        replace(q, item=replace(q.item, image=images[to[q.image_id]]), image_id=to[q.image_id])
        for q in questions
    ]


def cannot_probe(dataset: EvalDataset) -> str | None:
    """Why the probes cannot run on this dataset (None: they can)."""
    if dataset.open_ended:
        return (
            f"the image-swap probe was not run: {dataset.described} is open-ended (graded "
            "answers have no chance rate to test against)"
        )
    if len({q.image_id for q in dataset.questions}) < 2:
        return (
            f"the image-swap probe was not run: {dataset.described} has a single image, so "
            "there is no other image to ask with"
        )
    return None


def chance_rate(options: int, circular: bool) -> float:
    """A uniform guess's chance of being right: 1/n, or (1/n)^n under CircularEval."""
    return (1 / options) ** options if circular else 1 / options


def above_chance_p(right: int, chances: Sequence[float]) -> float:
    """P(at least `right` right by chance), each question right with its own chance rate: the
    exact Poisson-binomial upper tail (scipy's exact binomial test when the rates are equal)."""
    if not chances or right <= 0:
        return 1.0
    if len(set(chances)) == 1:
        from scipy.stats import binomtest

        return float(binomtest(right, len(chances), chances[0], alternative="greater").pvalue)
    dist = np.zeros(len(chances) + 1)
    dist[0] = 1.0
    for p in chances:
        dist[1:] = dist[1:] * (1 - p) + dist[:-1] * p
        dist[0] *= 1 - p
    return float(min(1.0, dist[right:].sum()))


def score_swap(
    job: ProbeJob, normal: Outcomes, swapped: Outcomes, chances: dict[str, float], metric: str
) -> SwapProbe:
    """A model's probe, on the questions it answered both ways: `normal` and `swapped` are its
    outcomes with its own image and with another, `chances` each question's chance rate under
    `metric`."""
    common = [q for q in swapped if q in normal]
    outcomes = [swapped[q] for q in common]
    right = sum(ok for _, ok in outcomes)
    rates = [chances[q] for q in common]
    n = len(common)
    normal_accuracy = sum(normal[q][1] for q in common) / n if n else 0.0
    swapped_accuracy = accuracy(outcomes)
    p = above_chance_p(right, rates) if n else None
    return SwapProbe(
        model=job.model,
        sees=job.sees,
        run_id=job.run_id,
        metric=metric,
        questions=n,
        normal=normal_accuracy,
        swapped=swapped_accuracy,
        chance=sum(rates) / n if n else 0.0,
        gap=normal_accuracy - swapped_accuracy.accuracy,
        p_value=p,
        above_chance=p is not None and p < LEVEL,
        asked_now=job.asked,
        reused=job.reused,
        unanswered=job.unanswered,
        calls_made=job.calls_made,
    )
