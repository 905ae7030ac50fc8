"""The item analysis and the anchor set on simulated answers with known parameters
(benchfoundry/devtools/irt_simulation.py: abilities and difficulties N(0, 1.5²),
discriminations log-normal around 1.3).

    python bench/item_analysis.py [--seeds 10]

Prints:
- recovery at 24 models × 120 items: Spearman of the fitted difficulties (and abilities) with the
  true ones, over the seeds; answers from the two-parameter model itself, then with a 1-in-4
  guessing floor as multiple choice has (the fit has no floor, see tasks/evaluate/irt.py);
- planted wrong keys (8 per 120 items): how many the analysis marks suspect, and how many sound
  items it marks by mistake;
- the anchor set: each model left out of the fit in turn and estimated from K anchors (p-IRT and
  weighted anchors) against its true accuracy on all items, beside K items drawn at random;
- the fit's time at 20 models × 20,000 items.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.stats import spearmanr

from benchfoundry.devtools.irt_simulation import simulate
from benchfoundry.tasks.evaluate.anchors import ItemParameters, choose, estimate
from benchfoundry.tasks.evaluate.irt import fit_2pl
from benchfoundry.tasks.evaluate.items import SUSPECT_BELOW


def recovery(seeds: int, guessing: bool) -> None:
    rhos, abilities, found, false, planted, sound = [], [], 0, 0, 0, 0
    for seed in range(seeds):
        sim = simulate(24, 120, miskeyed=8, guessing=guessing, seed=seed)
        fit = fit_2pl(sim.correct)
        good = np.setdiff1d(np.arange(120), sim.miskeyed)
        rhos.append(spearmanr(fit.difficulty[good], sim.difficulty[good]).statistic)
        abilities.append(spearmanr(fit.ability, sim.ability).statistic)
        flagged = set(np.flatnonzero(fit.discrimination < SUSPECT_BELOW))
        found += len(flagged & set(sim.miskeyed))
        false += len(flagged - set(sim.miskeyed))
        planted, sound = planted + len(sim.miskeyed), sound + len(good)
    kind = "with a 1-in-4 guessing floor" if guessing else "from the 2PL itself"
    print(
        f"24 models × 120 items, answers {kind}: difficulty Spearman mean {np.mean(rhos):.3f} "
        f"(min {np.min(rhos):.3f}), ability {np.mean(abilities):.3f}; planted wrong keys "
        f"found {found}/{planted} ({found / planted:.0%}), sound items flagged {false}/{sound} "
        f"({false / sound:.1%})"
    )


def anchors(models: int, items: int, k: int, seed: int = 1) -> None:
    sim = simulate(models, items, seed=seed)
    irt, weighted, randomly, covered = [], [], [], 0
    rng = np.random.default_rng(seed)
    ids = [f"q{j}" for j in range(items)]
    for held in range(models):
        fit = fit_2pl(np.delete(sim.correct, held, axis=0))
        params = ItemParameters(
            ids, fit.discrimination, fit.intercept, fit.difficulty,
            fit.discrimination < SUSPECT_BELOW, "sim", None,
        )  # fmt: skip
        answers = {q: bool(sim.correct[held, j]) for j, q in enumerate(ids)}
        found = estimate("held", True, answers, choose(params, k), params)
        truth = sim.correct[held].mean()
        irt.append(abs(found.irt - truth))
        weighted.append(abs(found.weighted - truth))
        covered += found.low <= truth <= found.high
        drawn = rng.choice(items, k, replace=False)
        randomly.append(abs(sim.correct[held, drawn].mean() - truth))
    print(
        f"anchors {k} of {items} items, {models} models each left out in turn: mean absolute "
        f"error p-IRT {np.mean(irt):.1%} (max {np.max(irt):.1%}, interval covers "
        f"{covered}/{models}), weighted anchors {np.mean(weighted):.1%}, {k} items at random "
        f"{np.mean(randomly):.1%}"
    )


def speed() -> None:
    sim = simulate(20, 20_000, seed=0)
    start = time.perf_counter()
    fit = fit_2pl(sim.correct)
    seconds = time.perf_counter() - start
    print(f"fit at 20 models × 20,000 items: {seconds:.2f} s ({fit.iterations} iterations)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    recovery(args.seeds, guessing=False)
    recovery(args.seeds, guessing=True)
    for models, items, k in ((24, 600, 50), (24, 600, 100), (60, 600, 50)):
        anchors(models, items, k)
    speed()


if __name__ == "__main__":
    main()
