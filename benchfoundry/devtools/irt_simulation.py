"""Answers drawn from a known two-parameter logistic model, to prove the item analysis on
(`bench/item_analysis.py`, `tests/tasks/evaluate/test_irt.py`): abilities and difficulties
normal, discriminations log-normal around 1.3, an optional guessing floor, and `miskeyed` items
whose key names a wrong option, so that a respondent is marked right only when it picks that
option, which able respondents avoid. `twins` answers the same items in another language
(MMBench-CN), for the item analysis per language."""

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


def twins(
    sim: Simulated,
    *,
    gap: float = 1.5,
    misleading: int = 0,
    options: int = 4,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Answers to the twins of `sim`'s items in another language, and the positions of the
    `misleading` twins. Every respondent is weaker in it by a gap of its own (uniform in
    [0, 2 × gap]: most models lose points, some lose many); a miskeyed item's twin shares its
    wrong key; a misleading twin's text points able respondents to a wrong option as a wrong key
    does, though its English item is sound."""
    rng = np.random.default_rng(seed)
    respondents, items = sim.correct.shape
    ability = sim.ability - rng.uniform(0, 2 * gap, respondents)
    chance = 1 / (1 + np.exp(-sim.discrimination * (ability[:, None] - sim.difficulty[None, :])))
    correct = (rng.random((respondents, items)) < chance).astype(float)
    sound = np.setdiff1d(np.arange(items), sim.miskeyed)
    bad = np.sort(rng.choice(sound, misleading, replace=False)) if misleading else np.array([], int)
    for j in [*sim.miskeyed, *bad]:
        correct[:, j] = rng.random(respondents) < (1 - chance[:, j]) / (options - 1)
    return correct, bad
