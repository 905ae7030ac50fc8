"""Quality control against the real test server: scripted text-only and vision-language models
answer over HTTP, the rules decide exactly as specified, CircularEval stops early, failing
models are left out of the counts, and a rerun makes no new calls."""

import re

import pytest

from benchfoundry.core.records import CandidateRecord, JudgementRecord, ScoredRecord
from benchfoundry.devtools.testserver import Rule, Script, TestServer
from benchfoundry.gateway import Gateway
from benchfoundry.gateway.assemble import gateway_for_run
from benchfoundry.pipeline.registry import StageRun
from benchfoundry.storage.tables import RunFolder
from benchfoundry.tasks.qc.options import ConsensusOptions, FilterOptions, SelectOptions
from benchfoundry.tasks.qc.stage import (
    QCConfigError,
    consensus_all,
    ensemble_warnings,
    filter_all,
    run_consensus,
    run_filter,
    run_select,
    select_all,
)

ANSWERS = "ABCDABCD"
QUESTIONS = {f"Question number {k}?": k for k in range(8)}


def _candidate(make, k: int, image_id: str) -> CandidateRecord:
    return make(
        f"q{k}",
        image_id,
        dimension="dim_even" if k % 2 == 0 else "dim_odd",
        question=f"Question number {k}?",
        options=[f"option {k}-{j}" for j in range(4)],
        answer=ANSWERS[k],
    )


def _key_letter(request) -> str:
    k = QUESTIONS[re.search(r"Question: (.*)", request.text).group(1)]
    key = f"option {k}-{'ABCD'.index(ANSWERS[k])}"
    return next(L for L, text in re.findall(r"^([A-D])\. (.*)$", request.text, re.M) if text == key)


def _question(request) -> int:
    return QUESTIONS[re.search(r"Question: (.*)", request.text).group(1)]


def partial(request) -> str:
    """Knows the key of questions 0-3 only."""
    return _key_letter(request) if _question(request) < 4 else "I do not know."


def seer(request) -> str:
    """Sees the image: right except on questions 6 and 7 (whose keys look wrong to it)."""
    return _key_letter(request) if _question(request) < 6 else "I cannot tell."


@pytest.fixture
def server():
    script = Script(
        rules=[
            Rule(_key_letter, model="oracle"),
            Rule("A", model="always-a"),
            Rule(partial, model="partial"),
            Rule(seer, model="seer"),
        ]
    )
    with TestServer(script) as running:
        running.inject("400", model="broken", times=10_000)
        yield running


@pytest.fixture
def run(tmp_path, image_bytes, store_raw_image, candidate_record):
    folder = RunFolder(tmp_path / "run")
    images = [store_raw_image(folder, image_bytes(seed=s)) for s in range(4)]
    folder.table(CandidateRecord).append(
        [_candidate(candidate_record, k, images[k % 4]) for k in range(8)]
    )
    return folder


def _models(server):
    url = server.base_url
    return {
        "text_only": [f"openai/{m}@{url}" for m in ("oracle", "always-a", "partial", "broken")],
        "vlm": [f"openai/{m}@{url}" for m in ("seer", "always-a", "broken")],
    }


def _short(name: str) -> str:
    return name.split("/")[1].split("@")[0]


QUIET = FilterOptions(blind=[], chance=[], max_hits=1)


def _decide(run, server, rules, select_options=None):
    models = _models(server)
    gateway = gateway_for_run(run.root, stage="filter", catalogue={})
    options = QUIET.model_copy(update={"rules": rules})
    text = filter_all(run, gateway, options, models)
    vlm = consensus_all(run, gateway, ConsensusOptions(), models)
    summary = select_all(
        run, options, ConsensusOptions(), select_options or SelectOptions(target=10), models
    )
    scored = {r.question_id: r for r in run.table(ScoredRecord).records()}
    return text, vlm, summary, scored


def test_hits_exclude_failing_models_and_circular_eval_stops_early(run, server):
    text, vlm, _, scored = _decide(run, server, ["seed"])
    # Text-only: oracle right everywhere; always-a right on A keys (q0, q4) first pass only;
    # partial right on q0-q3 in every rotation; broken fails and is left out.
    assert [scored[f"q{k}"].hits_text for k in range(8)] == [3, 2, 2, 2, 2, 1, 1, 1]
    assert [scored[f"q{k}"].hits_text_circular for k in range(8)] == [2, 2, 2, 2, 1, 1, 1, 1]
    assert {r.n_text_models for r in scored.values()} == {3}
    assert [_short(m) for m in scored["q4"].text_hit_by] == ["oracle", "always-a"]
    calls = {_short(m.model): (m.calls_made, m.calls_if_every_pass) for m in text.models}
    assert calls == {
        "oracle": (32, 32),
        "always-a": (10, 32),  # stops at the first wrong pass
        "partial": (20, 32),
        "broken": (8, 32),
    }
    broken = next(m for m in text.models if _short(m.model) == "broken")
    assert broken.errors and broken.counted
    # With the image: seer right on q0-q5 in every rotation, always-a on A keys first pass.
    assert [scored[f"q{k}"].hits_vlm for k in range(8)] == [2, 1, 1, 1, 2, 1, 0, 0]
    assert [scored[f"q{k}"].hits_vlm_circular for k in range(8)] == [1, 1, 1, 1, 1, 1, 0, 0]
    assert [scored[f"q{k}"].difficulty for k in range(8)] == [
        "easy", "medium", "medium", "medium", "easy", "medium", "tough", "tough",
    ]  # fmt: skip
    assert vlm.calls_made < vlm.calls_if_every_pass


@pytest.mark.parametrize(
    ("rules", "expected"),
    [
        # seed: dropped only where every text-only model is right (q0).
        (["seed"], {0: "dropped", 6: "flagged", 7: "flagged"}),
        # mmstar, K = 1: dropped where more than one is right (q0-q4).
        (["mmstar"], {0: "dropped", 1: "dropped", 2: "dropped", 3: "dropped", 4: "dropped",
                      6: "flagged", 7: "flagged"}),
        # mmbench: flagged (not dropped) where 2 of 3 answer every rotation (q0-q3).
        (["mmbench"], {0: "flagged", 1: "flagged", 2: "flagged", 3: "flagged", 6: "flagged",
                       7: "flagged"}),
    ],
)  # fmt: skip
def test_each_rule_decides_exactly_as_specified(run, server, rules, expected):
    _, _, summary, scored = _decide(run, server, rules)
    decisions = {k: scored[f"q{k}"].decision for k in range(8)}
    assert decisions == {k: expected.get(k, "selected") for k in range(8)}
    for k in (6, 7):  # no vision-language model right under CircularEval
        assert "possibly_flawed" in scored[f"q{k}"].flags
        assert "possibly flawed" in scored[f"q{k}"].reason
    for record in scored.values():
        assert record.reason
        if record.decision == "dropped":
            assert record.reason.startswith(rules[0]) and "text_answerable" in record.flags
    if rules == ["mmbench"]:
        assert "text_majority" in scored["q0"].flags and "inspect by hand" in scored["q0"].reason
    assert sum(summary.decisions.values()) == 8


def test_a_rerun_makes_no_new_calls_and_replaces_the_decisions(run, server):
    _, _, _, first = _decide(run, server, ["seed"])
    assert "held_back" not in {r.decision for r in first.values()}
    before = server.stats.by_model.copy()
    judgements = run.table(JudgementRecord).count()
    _, _, summary, scored = _decide(run, server, ["seed"], SelectOptions(target=1))
    after = server.stats.by_model
    assert {m: after[m] - before[m] for m in after if m != "broken"} == {
        m: 0 for m in after if m != "broken"
    }  # only the failing model is asked again
    assert run.table(JudgementRecord).count() == judgements
    assert run.table(ScoredRecord).count() == 8
    assert {r.decision for r in scored.values()} == {"dropped", "flagged", "selected", "held_back"}


def test_selection_balances_and_reports_the_shortfall(run, server):
    _, _, summary, scored = _decide(run, server, ["seed"], SelectOptions(target=4, max_per_image=1))
    by_dim = {d.dimension: d for d in summary.dimensions}
    # Eligible: q1-q5 (q0 dropped, q6/q7 flagged). Four images, one question each at most.
    assert sum(d.selected for d in by_dim.values()) == 4
    assert all(d.shortfall == 4 - d.selected for d in by_dim.values())
    held = [r for r in scored.values() if r.decision == "held_back"]
    assert held and all("image cap" in r.reason for r in held)
    assert summary.llm_hit_rate_selected is not None


def test_a_text_model_cannot_sit_in_the_vision_ensemble(run, server):
    gateway = Gateway({})
    with pytest.raises(QCConfigError, match="blind/random see no image"):
        consensus_all(run, gateway, ConsensusOptions(), {"vlm": ["blind/random"]})


def test_consensus_without_visual_facts_leaves_candidates_unassessed_with_the_error(run):
    gateway = gateway_for_run(run.root, stage="consensus")
    summary = consensus_all(run, gateway, ConsensusOptions(), {"vlm": ["facts/smollm2"]})
    assert summary.models[0].errors == {"no_facts": 8}
    select_all(run, QUIET, ConsensusOptions(), SelectOptions(), {"vlm": ["facts/smollm2"]},
               steps=["consensus", "select"])  # fmt: skip
    scored = run.table(ScoredRecord).records()
    assert {r.decision for r in scored} == {"unassessed"}
    assert all("no visual facts for image" in r.reason and "extract" in r.reason for r in scored)


def test_baselines_alone_do_not_decide_when_the_only_llm_failed(run, server):
    """The one text-only LLM fails everywhere: the blind baseline answered, but the candidate is
    unassessed and the reason names the failed model, never a drop by the baseline."""
    url = server.base_url
    models = {"text_only": [f"openai/broken@{url}"], "vlm": [f"openai/seer@{url}"]}
    options = FilterOptions(blind=["blind/longest"], chance=[], rules=["seed", "mmstar"])
    gateway = gateway_for_run(run.root, stage="filter", catalogue={})
    filter_all(run, gateway, options, models)
    consensus_all(run, gateway, ConsensusOptions(), models)
    select_all(run, options, ConsensusOptions(), SelectOptions(target=10), models)
    scored = {r.question_id: r for r in run.table(ScoredRecord).records()}
    assert {r.decision for r in scored.values()} == {"unassessed"}
    reason = scored["q0"].reason
    assert "no text-only LLM answered" in reason and "broken" in reason and "400" in reason
    assert "blind/longest" in reason and "seed:" not in reason


def test_the_report_warns_while_the_ensemble_is_too_small_for_every_bin():
    def warned(n: int) -> list[str]:
        return ensemble_warnings([f"m{i}" for i in range(n)], [], ConsensusOptions(), {})

    assert "takes only 2 of 4 bins, and every candidate it misses is flagged" in warned(1)[0]
    assert "takes only 3 of 4 bins;" in warned(2)[0]
    assert warned(3) == [] and warned(16) == [], "three members take all four bins"


def test_consensus_asks_only_what_the_text_only_step_left(run, server):
    options = QUIET.model_copy(update={"rules": ["seed"]})  # drops q0 alone (every LLM right)
    stage = StageRun.make(run, filter=options, select=SelectOptions(target=10))
    stage.models = _models(server)
    run_filter(stage)
    asked = run_consensus(stage)
    assert (asked.candidates, asked.skipped_dropped) == (7, 1)
    assert "1 dropped by the text-only step were not asked" in asked.markdown()
    seer_calls = server.stats.by_model["seer"]
    summary = run_select(stage)
    scored = {r.question_id: r for r in run.table(ScoredRecord).records()}
    assert scored["q0"].decision == "dropped" and scored["q0"].reason.startswith("seed:")
    assert scored["q0"].n_vlm_models == 0 and scored["q0"].difficulty is None
    assert summary.reasons["dropped:seed"] == 1, "not asked is not unassessed"
    assert sum(summary.vlm_hit_histogram.values()) == 7
    # The rest decide as when every candidate is asked.
    assert [scored[f"q{k}"].hits_vlm for k in range(1, 8)] == [1, 1, 1, 2, 1, 0, 0]
    # Asking the dropped ones too (ask_dropped) asks q0 and reports its difficulty.
    stage.options.consensus = ConsensusOptions(ask_dropped=True)
    assert run_consensus(stage).candidates == 8
    assert server.stats.by_model["seer"] > seer_calls
    run_select(stage)
    q0 = next(r for r in run.table(ScoredRecord).records() if r.question_id == "q0")
    assert q0.decision == "dropped" and (q0.n_vlm_models, q0.difficulty) == (2, "easy")
