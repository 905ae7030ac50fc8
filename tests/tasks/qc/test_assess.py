"""Hit counting, the text-only rules, the possibly-flawed flag and difficulty bins."""

import pytest

from benchfoundry.core.records import JudgementRecord
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.qc.assess import Outcome, count_hits, judge, outcomes, stored_passes
from benchfoundry.tasks.qc.options import ConsensusOptions, FilterOptions


def _hits(spec: dict[str, tuple[bool, bool | None]], failed=(), missing=()):
    results = {m: Outcome(m, v, c) for m, (v, c) in spec.items()}
    results.update({m: Outcome(m, False, None, error="server_error: 500") for m in failed})
    return count_hits(results, [*spec, *failed, *missing])


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (16, ["tough"] * 4 + ["hard"] * 4 + ["medium"] * 4 + ["easy"] * 5),
        (1, ["tough", "easy"]),
        (4, ["tough", "hard", "medium", "easy", "easy"]),
        (2, ["tough", "medium", "easy"]),
    ],
)
def test_difficulty_bins_scale_with_the_ensemble(n, expected):
    options = ConsensusOptions()
    assert [options.difficulty(h, n) for h in range(n + 1)] == expected
    assert options.difficulty(0, 0) is None


def test_bins_must_rise_and_end_at_one():
    with pytest.raises(ValueError, match="rise"):
        ConsensusOptions(bins={"hard": 0.5, "easy": 0.4})
    with pytest.raises(ValueError, match="last must be 1.0"):
        ConsensusOptions(bins={"hard": 0.5, "easy": 0.9})


def test_mmstar_limit_scales_two_of_eight():
    options = FilterOptions()
    assert [options.hit_limit(n) for n in (8, 16, 3, 1)] == [2, 4, 1, 0]
    assert FilterOptions(max_hits=5).hit_limit(8) == 5


def test_seed_rule_drops_only_when_every_model_is_right():
    options = FilterOptions(rules=["seed"])
    all_right = _hits({"a": (True, True), "b": (True, False)})
    verdict = judge(all_right, None, options, ConsensusOptions())
    assert verdict.status == "dropped" and verdict.codes == ["seed"]
    assert "all 2 text-only models" in verdict.reasons[0] and "a, b" in verdict.reasons[0]
    one_wrong = _hits({"a": (True, True), "b": (False, False)})
    assert judge(one_wrong, None, options, ConsensusOptions()).status == "eligible"


def test_mmstar_rule_keeps_at_most_k_hits():
    options = FilterOptions(rules=["mmstar"], max_hits=1)
    two = _hits({"a": (True, None), "b": (True, None), "c": (False, None)})
    assert judge(two, None, options, ConsensusOptions()).status == "dropped"
    one = _hits({"a": (True, None), "b": (False, None), "c": (False, None)})
    assert judge(one, None, options, ConsensusOptions()).status == "eligible"


def test_mmbench_rule_flags_a_circular_majority_and_never_drops():
    options = FilterOptions(rules=["mmbench"])
    # Everyone right on the first pass, but only one of three under CircularEval: no flag.
    first_pass = _hits({"a": (True, True), "b": (True, False), "c": (True, False)})
    assert judge(first_pass, None, options, ConsensusOptions()).status == "eligible"
    majority = _hits({"a": (True, True), "b": (True, True), "c": (False, False)})
    verdict = judge(majority, None, options, ConsensusOptions())
    assert verdict.status == "flagged" and verdict.flags == ["text_majority"]
    assert "inspect by hand" in verdict.reasons[0]


def test_failed_models_are_left_out_of_the_count():
    options = FilterOptions(rules=["seed"])
    hits = _hits({"a": (True, True)}, failed=["broken"])
    assert hits.answered == 1 and hits.failed == ("broken: server_error: 500",)
    assert judge(hits, None, options, ConsensusOptions()).status == "dropped"
    nobody = _hits({}, failed=["broken"])
    verdict = judge(nobody, None, options, ConsensusOptions())
    assert verdict.status == "unassessed" and verdict.codes == ["text_failed"]
    assert "broken: server_error: 500" in verdict.reasons[0]


def test_a_member_that_never_answered_leaves_the_candidate_unassessed():
    hits = _hits({"a": (False, False)}, missing=["new-model"])
    verdict = judge(hits, None, FilterOptions(), ConsensusOptions())
    assert verdict.status == "unassessed" and verdict.codes == ["text_missing"]
    assert "new-model" in verdict.reasons[0] and "run the filter step" in verdict.reasons[0]
    vlm = judge(None, _hits({}, missing=["v"]), FilterOptions(), ConsensusOptions())
    assert vlm.status == "unassessed" and vlm.codes == ["vlm_missing"]


def test_an_unknown_circular_result_is_not_taken_for_a_flaw():
    # Right on the first pass, circular unknown (a later pass failed): not possibly flawed.
    cut = _hits({"x": (True, None), "y": (False, False)})
    assert cut.circular == 0 and cut.circular_unknown_hits == 1
    assert judge(None, cut, FilterOptions(), ConsensusOptions()).status == "eligible"


def test_no_vlm_right_under_circular_eval_is_possibly_flawed():
    vlm = _hits({"x": (True, False), "y": (False, False)})
    verdict = judge(None, vlm, FilterOptions(), ConsensusOptions())
    assert verdict.status == "flagged" and verdict.flags == ["possibly_flawed"]
    assert verdict.difficulty == "medium"  # 1 of 2 right on the first pass
    fine = _hits({"x": (True, True), "y": (False, False)})
    assert judge(None, fine, FilterOptions(), ConsensusOptions()).status == "eligible"


@pytest.mark.parametrize(
    ("right", "difficulty", "flawed"),
    [
        ((), "tough", True),
        (("objects",), "hard", False),
        (("text",), "hard", False),
        (("objects", "captions"), "medium", False),
        (("objects", "text", "captions"), "easy", False),
    ],
)
def test_three_readers_take_every_bin_and_flag_only_when_all_miss(right, difficulty, flawed):
    # Three fact readers of different parts; a member right on every rotation is right.
    readers = ("objects", "text", "captions")
    vlm = _hits({m: (m in right, m in right) for m in readers})
    verdict = judge(None, vlm, FilterOptions(), ConsensusOptions())
    assert verdict.difficulty == difficulty
    assert ("possibly_flawed" in verdict.flags) is flawed
    assert verdict.status == ("flagged" if flawed else "eligible")
    if flawed:
        assert "none of 3 vision-language models" in verdict.reasons[0]


def test_a_reader_right_on_the_first_pass_only_does_not_save_a_candidate():
    # Wrong on a later rotation is a miss under CircularEval: with the other two wrong, flagged.
    first_only = _hits(
        {"objects": (True, False), "text": (False, False), "captions": (False, False)}
    )
    verdict = judge(None, first_only, FilterOptions(), ConsensusOptions())
    assert verdict.flags == ["possibly_flawed"] and verdict.difficulty == "hard"


def test_every_vlm_failing_leaves_the_candidate_unassessed():
    verdict = judge(None, _hits({}, failed=["v"]), FilterOptions(), ConsensusOptions())
    assert verdict.status == "unassessed" and verdict.codes == ["vlm_failed"]
    assert "rerun" in verdict.reasons[0] and "v: server_error: 500" in verdict.reasons[0]


def _pass(qid, model, k, correct, error=None, mode="text_only"):
    return JudgementRecord(
        question_id=qid,
        model=model,
        mode=mode,
        with_image=False,
        pass_index=k,
        option_order=[],
        prompt="",
        raw_response=None,
        extracted=None,
        extracted_by="heuristic",
        correct=correct,
        error=error,
    )


def test_outcomes_read_vanilla_and_circular_from_stored_passes():
    rows = [_pass("q", "m", k, True) for k in range(3)] + [
        _pass("q", "early", 0, True),
        _pass("q", "early", 1, False),
        _pass("q", "err", 0, False, "server_error: x"),
        _pass("q", "cut", 0, True),
        _pass("q", "cut", 1, False, "server_error: later"),
        _pass("q", "vanilla", 0, True),
    ]
    got = outcomes(rows, {"q": 3})["q"]
    assert got["m"] == Outcome("m", True, True)
    assert got["early"] == Outcome("early", True, False)
    assert got["err"].error == "server_error: x" and not got["err"].vanilla
    # A later pass failed: the first-pass hit stands, the circular result is unknown.
    assert got["cut"] == Outcome("cut", True, None)
    # Right first and never asked again: this model was not asked under CircularEval.
    assert got["vanilla"] == Outcome("vanilla", True, None)


def test_outcomes_from_a_stored_table_read_by_columns_equal_those_from_records(tmp_path):
    rows = [_pass("q", "m", k, True) for k in range(3)] + [
        _pass("q", "cut", 0, True),
        _pass("q", "cut", 1, False, "later"),
        _pass("r", "m", 0, False, "server_error: x"),
        _pass("q", "v", 0, False, mode="consensus"),
    ]
    table = RunFolder(tmp_path / "run").table(JudgementRecord)
    table.append(rows)
    stored = table.read(
        columns=["question_id", "model", "mode", "pass_index", "correct", "error_kind", "error"]
    )
    passes = stored_passes(stored, "text_only")
    assert len(passes) == 6 and {p.mode for p in passes} == {"text_only"}
    text = [r for r in rows if r.mode == "text_only"]
    assert outcomes(passes, {"q": 3, "r": 3}) == outcomes(text, {"q": 3, "r": 3})
    assert outcomes(stored_passes(stored, "consensus"), {"q": 3})["q"] == {
        "v": Outcome("v", False, False)
    }


def test_the_flag_adds_two_votes_and_neither_clears_the_other():
    """The evidence reader's verdict and the models' consensus are two votes, each with its own
    code and reason: the reader confirming a key no longer clears the models' miss (issue 54),
    the models answering does not clear the reader's doubt, and both can stand at once."""
    from benchfoundry.tasks.qc.evidence import Evidence

    options, consensus = FilterOptions(), ConsensusOptions()
    missed = _hits({"a": (False, False), "b": (False, False)})
    found = _hits({"a": (True, True), "b": (False, False)})
    agrees = Evidence(True, "reads number 3, as the key says")
    differs = Evidence(False, "reads number 2 (option B), not the key's number 3")

    confirmed_but_missed = judge(None, missed, options, consensus, evidence=agrees)
    assert confirmed_but_missed.status == "flagged"
    assert confirmed_but_missed.flags == ["possibly_flawed"]
    assert confirmed_but_missed.codes == ["possibly_flawed_models"]
    assert "none of 2 vision-language models" in confirmed_but_missed.reasons[0]
    assert "reads number 3, as the key says" in confirmed_but_missed.reasons[0]

    doubted_but_answered = judge(None, found, options, consensus, evidence=differs)
    assert doubted_but_answered.flags == ["possibly_flawed"]
    assert doubted_but_answered.codes == ["possibly_flawed_evidence"]
    assert "not the key's number 3" in doubted_but_answered.reasons[0]

    both = judge(None, missed, options, consensus, evidence=differs)
    assert both.flags == ["possibly_flawed"]
    assert both.codes == ["possibly_flawed_evidence", "possibly_flawed_models"]
    assert len(both.reasons) == 2

    neither = judge(None, found, options, consensus, evidence=agrees)
    assert neither.status == "eligible" and neither.flags == [] and neither.codes == []
    only_reader = judge(None, None, options, consensus, evidence=differs)
    assert only_reader.codes == ["possibly_flawed_evidence"]


@pytest.mark.parametrize(
    ("spec", "flagged"),
    [
        ({"a": (False, False), "b": (False, False)}, True),  # no model right
        ({"a": (True, False), "b": (False, False)}, True),  # right first, wrong rotated
        ({"a": (True, True), "b": (False, False)}, False),
        ({"a": (True, None), "b": (False, None)}, False),  # circular unknown: first pass
        ({"a": (False, None), "b": (False, None)}, True),
    ],
)
def test_with_the_reader_off_the_models_flag_what_they_flagged_alone(spec, flagged):
    """Switching the evidence reader off loses no flag of the models: what they flag with the
    reader confirming the key, they flag with the reader off, with the same code."""
    from benchfoundry.tasks.qc.evidence import Evidence

    options, consensus = FilterOptions(), ConsensusOptions()
    hits = _hits(spec)
    off = judge(None, hits, options, consensus)
    on = judge(None, hits, options, consensus, evidence=Evidence(True, "reads it"))
    assert off.codes == (["possibly_flawed_models"] if flagged else [])
    assert on.codes == off.codes and on.flags == off.flags
