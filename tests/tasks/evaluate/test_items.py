"""Item analysis: the two-parameter IRT fit recovers known parameters from simulated answers
and finds planted wrong keys (the report's item analysis on real evaluations is tested with the
report, in test_leaderboard.py, which starts Prefect's server once for both)."""

from __future__ import annotations

import numpy as np
from scipy.stats import spearmanr

from benchfoundry.devtools.irt_simulation import simulate
from benchfoundry.tasks.evaluate.irt import fit_2pl


def test_the_fit_recovers_simulated_parameters_and_planted_wrong_keys():
    found = false_alarms = 0
    for seed in range(5):  # 24 models × 120 items, 8 planted wrong keys each time
        sim = simulate(24, 120, miskeyed=8, seed=seed)
        fit = fit_2pl(sim.correct)
        assert fit.converged
        good = np.setdiff1d(np.arange(120), sim.miskeyed)
        assert spearmanr(fit.difficulty[good], sim.difficulty[good]).statistic >= 0.9
        assert spearmanr(fit.ability, sim.ability).statistic >= 0.9
        flagged = set(np.flatnonzero(fit.discrimination < 0.2))
        found += len(flagged & set(sim.miskeyed))
        false_alarms += len(flagged - set(sim.miskeyed))
    assert found >= 28 and false_alarms <= 4, (found, false_alarms)  # of 40 planted, 560 sound


def test_unasked_cells_are_left_out_not_counted_wrong():
    sim = simulate(24, 120, seed=7)
    holes = sim.correct.copy()
    holes[np.random.default_rng(0).random(holes.shape) < 0.3] = np.nan
    fit = fit_2pl(holes)
    assert spearmanr(fit.difficulty, sim.difficulty).statistic >= 0.85
    # The standard errors grow where fewer respondents answered.
    assert np.median(fit_2pl(sim.correct).difficulty_se) < np.median(fit.difficulty_se)
