"""Answers drawn from a known two-parameter logistic model, to prove the item analysis on
(`bench/item_analysis.py`, `tests/tasks/evaluate/test_irt.py`): abilities and difficulties
normal, discriminations log-normal around 1.3, an optional guessing floor, and `miskeyed` items
whose key names a wrong option, so that a respondent is marked right only when it picks that
option, which able respondents avoid."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Simulated:
    correct: np.ndarray  # respondents × items, 1 right, 0 wrong
    ability: np.ndarray
    difficulty: np.ndarray
    discrimination: np.ndarray
    miskeyed: np.ndarray  # the planted wrong keys' item positions


def simulate(
    respondents: int,
    items: int,
    *,
    miskeyed: int = 0,
    options: int = 4,
    guessing: bool = False,
    spread: float = 1.5,
    seed: int = 0,
) -> Simulated:
    """`spread`: the standard deviation of abilities and of difficulties; `guessing`: a right
    answer by chance one time in `options` on top of the model (multiple choice)."""
    rng = np.random.default_rng(seed)
    ability = rng.normal(0.0, spread, respondents)
    difficulty = rng.normal(0.0, spread, items)
    discrimination = rng.lognormal(0.25, 0.3, items)
    floor = 1.0 / options if guessing else 0.0
    chance = floor + (1 - floor) / (
        1 + np.exp(-discrimination * (ability[:, None] - difficulty[None, :]))
    )
    correct = (rng.random((respondents, items)) < chance).astype(float)
    bad = np.sort(rng.choice(items, miskeyed, replace=False)) if miskeyed else np.array([], int)
    for j in bad:  # right only when it picks the keyed wrong option among the others
        correct[:, j] = rng.random(respondents) < (1 - chance[:, j]) / (options - 1)
    return Simulated(correct, ability, difficulty, discrimination, bad)
