"""Item analysis: the two-parameter IRT fit recovers known parameters from simulated answers
and finds planted wrong keys (the report's item analysis on real evaluations is tested with the
report, in test_leaderboard.py, which starts Prefect's server once for both)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from benchfoundry.devtools.irt_simulation import simulate
from benchfoundry.tasks.evaluate.anchors import (
    AnchorError,
    ItemParameters,
    choose,
    estimate,
    parse_subset,
    read_parameters,
)
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


def _parameters(fit, n, suspect=None):
    return ItemParameters(
        question_ids=[f"q{j}" for j in range(n)],
        discrimination=fit.discrimination,
        intercept=fit.intercept,
        difficulty=fit.difficulty,
        suspect=np.zeros(n, bool) if suspect is None else suspect,
        dataset="sim",
        version="1",
    )


def test_anchors_estimate_a_held_out_models_accuracy():
    sim = simulate(25, 300, seed=2)
    errors, covered = [], 0
    for held in range(0, 25, 5):  # each fifth model left out of the fit, then estimated
        fit = fit_2pl(np.delete(sim.correct, held, axis=0))
        params = _parameters(fit, 300, suspect=fit.discrimination < 0.2)
        weights = choose(params, 30)
        assert len(weights) == 30 and sum(weights.values()) == int((~params.suspect).sum())
        assert not set(weights) & {f"q{j}" for j in np.flatnonzero(params.suspect)}
        answers = {f"q{j}": bool(sim.correct[held, j]) for j in range(300)}
        found = estimate("held", True, answers, weights, params)
        truth = sim.correct[held].mean()
        errors.append(abs(found.irt - truth))
        covered += found.low <= truth <= found.high
    assert np.mean(errors) < 0.08 and covered >= 4, (errors, covered)


def test_anchor_requests_that_cannot_be_met_say_why(tmp_path):
    fit = fit_2pl(simulate(10, 20, seed=1).correct)
    with pytest.raises(AnchorError, match="more anchors than the 20 sound items"):
        choose(_parameters(fit, 20), 21)
    with pytest.raises(AnchorError, match="anchors:K"):
        parse_subset("anchors:none")
    with pytest.raises(AnchorError, match="run benchfoundry report"):
        read_parameters(tmp_path / "items.parquet")
