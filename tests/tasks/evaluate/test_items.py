"""Item analysis: the two-parameter IRT fit recovers known parameters from simulated answers
and finds planted wrong keys; per language, a bilingual release's suspect twins are translation
suspects where their English item is fine, key suspects where it is flawed too (from stored
results; the report's item analysis on real evaluations is tested with the report, in
test_leaderboard.py, which starts Prefect's server once for both)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy.stats import spearmanr

from benchfoundry.core.records import ResultRecord
from benchfoundry.decisions.suspects import read_suspects
from benchfoundry.devtools.irt_simulation import simulate, twins
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.evaluate.anchors import (
    AnchorError,
    ItemParameters,
    choose,
    estimate,
    parse_subset,
    read_parameters,
)
from benchfoundry.tasks.evaluate.dataset import release_item_id
from benchfoundry.tasks.evaluate.irt import fit_2pl
from benchfoundry.tasks.evaluate.items import write_items
from benchfoundry.tasks.evaluate.summary import DatasetInfo, EvaluateSummary, ModelScore


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


# --- per language: a bilingual release's twins analysed apart from their English items -------


def _bilingual(tmp_path, english: np.ndarray, chinese: np.ndarray):
    """A release of English items and their zh twins (text only: the analysis reads no image),
    and a run whose stored first passes are `english` and `chinese` (respondents × items)."""
    respondents, items = english.shape
    release = tmp_path / "release"
    (release / "data" / "zh").mkdir(parents=True)
    rows = [
        {"question_id": f"q{j:02d}", "index": j, "question": f"Q{j}?", "hint": None,
         "options": ["a", "b", "c", "d"]}
        for j in range(items)
    ]  # fmt: skip
    pq.write_table(pa.Table.from_pylist(rows), release / "data" / "test-00000.parquet")
    twins = [{**r, "question": f"问题{r['index']}？"} for r in rows]
    pq.write_table(pa.Table.from_pylist(twins), release / "data" / "zh" / "test-00000.parquet")
    ids = {"en": [r["question_id"] for r in rows], "zh": [release_item_id(r, "zh") for r in twins]}
    assert all(q.startswith(f"q{j:02d}@zh:") for j, q in enumerate(ids["zh"]))
    run = RunFolder(tmp_path / "run")
    run.table(ResultRecord).append(
        ResultRecord(
            run_id="r", model=f"m{i}", question_id=q, pass_index=0, option_order=list("ABCD"),
            response=None, extracted=None, extracted_by="heuristic", correct=bool(m[i, j]),
            score=None, category=None, l2_category=None,
        )
        for language, m in (("en", english), ("zh", chinese))
        for i in range(respondents)
        for j, q in enumerate(ids[language])
    )  # fmt: skip
    # Only what the item analysis reads of an evaluation's summary (model_construct: the rest
    # of a summary is the evaluation's business).
    summary = EvaluateSummary.model_construct(
        run=str(run.root), mode="vanilla",
        dataset=DatasetInfo.model_construct(
            path=str(release), format="release", name="demo", version="1.0.0"
        ),
        scores=[
            ModelScore.model_construct(model=f"m{i}", with_image=True, run_id="r")
            for i in range(respondents)
        ],
    )  # fmt: skip
    path = tmp_path / "items.parquet"
    analyses = write_items([summary], path)
    return analyses, pq.read_table(path).to_pylist(), path


def test_twins_hard_for_every_model_are_translation_suspects_not_key_suspects(tmp_path):
    """Every model is weaker in Chinese, by a gap of its own, and 3 twins' texts mislead while
    their English items are sound: the twins are fitted apart from English, and those found
    suspect go back to people as the twin, not as a wrong key of the English item."""
    sim = simulate(16, 40, seed=3)
    chinese, misleading = twins(sim, gap=2.0, misleading=3, seed=3)
    analyses, rows, path = _bilingual(tmp_path, sim.correct, chinese)
    en, zh = analyses
    assert (en.label, zh.label) == ("demo 1.0.0 (en)", "demo 1.0.0 (zh)")
    assert en.fitted and zh.fitted and len(zh.respondents) == 16
    # Each language its own ability: the models' Chinese abilities are not their English ones.
    assert {r["language"] for r in rows} == {"en", "zh"} and len(rows) == 80
    assert not en.suspects, "sound English items"
    assert zh.suspects and all(s.kind == "translation" for s in zh.suspects)
    found = {int(s.question_id[1:3]) for s in zh.suspects}
    # As on simulated answers at large (16 × 40, 10 seeds: 22 of 30 misleading twins found,
    # 2 sound twins flagged): most misleading twins, few others.
    assert len(found & set(misleading)) >= 2 and len(found - set(misleading)) <= 1, found
    for s in zh.suspects:
        base = s.question_id.split("@")[0]
        assert s.review_item == f"{base}@zh"
        assert s.why.startswith(f"translation suspect: its English item {base} is fine; the "
                                "Chinese text may mislead (discrimination")  # fmt: skip
    assert "translation suspect" in " ".join(zh.lines())
    assert f"{len(found)} translation suspect" in zh.lines()[0]
    # Review gets the twins, with their why, and no English item.
    sent = read_suspects(path)
    assert set(sent) == {f"q{j:02d}@zh" for j in found}
    assert all(why.startswith("translation suspect") for why in sent.values())
    # Anchors come from the English items' own scale.
    assert read_parameters(path).question_ids == [f"q{j:02d}" for j in range(40)]


def test_a_flawed_english_item_stays_a_key_suspect_with_its_twin(tmp_path):
    """A wrong key is wrong in both languages (the twin shares it): the English item is a key
    suspect, and its twin, suspect too, goes back as the English item, not as a translation."""
    sim = simulate(16, 40, miskeyed=2, seed=4)
    chinese, _ = twins(sim, gap=1.0, seed=4)
    analyses, rows, path = _bilingual(tmp_path, sim.correct, chinese)
    en, zh = analyses
    planted = {f"q{j:02d}" for j in sim.miskeyed}
    assert planted <= {s.question_id for s in en.suspects}
    assert all(s.kind == "key" and s.review_item == s.question_id for s in en.suspects)
    assert "key suspect" in zh.lines()[0]
    flawed_twins = [s for s in zh.suspects if s.question_id.split("@")[0] in planted]
    assert flawed_twins, "the wrong key shows in Chinese too"
    for s in flawed_twins:
        base = s.question_id.split("@")[0]
        assert (s.kind, s.review_item) == ("key", base)
        assert s.why.startswith(f"key suspect with its English item {base}, suspect too")
    sent = read_suspects(path)
    assert planted <= set(sent) and not {f"{q}@zh" for q in planted} & set(sent)
    by_id = {r["question_id"]: r for r in rows}
    assert all(sent[q] == by_id[q]["why"] for q in planted), "the English item's own why"
    assert all(by_id[q]["suspect_kind"] == "key" for q in planted)
