"""The answering engine against the real test server, with scripted model behaviours."""

import re

import pytest

from benchfoundry.answering.chance import analytic_chance
from benchfoundry.answering.engine import AnsweringEngine, MCQItem, rotation
from benchfoundry.devtools.testserver import Rule, Script, TestServer
from benchfoundry.gateway import Gateway

ITEMS = [
    MCQItem("q2", "Is the sky blue?", ("yes", "no"), "A", category="two"),
    MCQItem("q3", "Which is a fruit?", ("car", "apple", "stone"), "B", category="three"),
    MCQItem("q4", "Which animal barks?", ("cat", "bird", "fish", "dog"), "D", category="four"),
    MCQItem("q5", "Which number is even?", ("1", "3", "8", "5", "7"), "C", category="five"),
]
KEY = {item.question: item.options["ABCDE".index(item.answer)] for item in ITEMS}


def _options(text):
    return dict(re.findall(r"^([A-J])\. (.*)$", text, flags=re.M))


def knows_the_key(request):
    question = re.search(r"Question: (.*)", request.text).group(1)
    return next(
        letter for letter, option in _options(request.text).items() if option == KEY[question]
    )


def right_first_pass_only(request):
    """Right while the options are in their original order, then always A."""
    question = re.search(r"Question: (.*)", request.text).group(1)
    item = next(i for i in ITEMS if i.question == question)
    return knows_the_key(request) if tuple(_options(request.text).values()) == item.options else "A"


@pytest.fixture(scope="module")
def server():
    script = Script(
        rules=[
            Rule(knows_the_key, model="oracle"),
            Rule("A", model="always-a"),
            Rule(right_first_pass_only, model="first-pass"),
            Rule("Either B or C, hard to say.", model="hedger"),
            Rule("B", model="judge", pattern="Either B or C"),
        ]
    )
    with TestServer(script) as running:
        yield running


def _model(server, name):
    return f"openai/{name}@{server.base_url}"


def test_rotation_moves_the_key():
    assert (
        rotation(4, 0) == [0, 1, 2, 3]
        and rotation(4, 1) == [1, 2, 3, 0]
        and rotation(3, 2) == [2, 0, 1]
    )


def test_the_oracle_passes_every_rotation(server):
    results, report = AnsweringEngine(Gateway()).run(ITEMS, _model(server, "oracle"))
    assert report.vanilla_accuracy == 1.0 and report.circular_accuracy == 1.0
    assert report.calls_made == report.calls_if_every_pass == 2 + 3 + 4 + 5
    four = next(r for r in results if r.item.question_id == "q4")
    assert [p.option_order for p in four.passes] == [
        list("ABCD"),
        list("BCDA"),
        list("CDAB"),
        list("DABC"),
    ]
    assert [p.extracted for p in four.passes] == ["D", "C", "B", "A"], (
        "the key's letter moves with the rotation"
    )
    assert all(p.extracted_by == "heuristic" and p.correct for p in four.passes)
    assert "A. cat" in four.passes[0].prompt and "A. bird" in four.passes[1].prompt
    records = [p.to_record("consensus", True) for p in four.passes]
    assert records[2].pass_index == 2 and records[2].option_order == list("CDAB")


def test_a_question_stops_at_its_first_wrong_pass(server):
    results, report = AnsweringEngine(Gateway()).run(ITEMS, _model(server, "first-pass"))
    assert report.vanilla_accuracy == 1.0
    # After pass 0 the model says A: right only where the rotation brings the key to A, which
    # happens in pass 1 for q3 (apple, stone, car); every other question stops after pass 1.
    assert {r.item.question_id: len(r.passes) for r in results} == {
        "q2": 2,
        "q3": 3,
        "q4": 2,
        "q5": 2,
    }
    assert [p.correct for p in results[1].passes] == [True, True, False]
    assert report.circular_accuracy == 0.0
    assert report.calls_made == 9 < report.calls_if_every_pass == 14


def test_always_a_and_the_analytic_chance(server):
    results, report = AnsweringEngine(Gateway()).run(ITEMS, _model(server, "always-a"))
    assert report.vanilla_accuracy == 0.25 and report.circular_accuracy == 0.0
    assert [len(r.passes) for r in results] == [2, 1, 1, 1]
    chance = analytic_chance([len(i.options) for i in ITEMS], [i.answer for i in ITEMS])
    assert (
        chance.constant_vanilla["A"] == report.vanilla_accuracy
        and chance.constant_circular["A"] == 0.0
    )
    vanilla = AnsweringEngine(Gateway()).run(ITEMS, _model(server, "always-a"), circular=False)[1]
    assert (
        vanilla.circular_accuracy is None and vanilla.calls_made == vanilla.calls_if_every_pass == 4
    )


def test_undecided_answers_go_to_the_judge_or_become_z(server):
    with_judge = AnsweringEngine(Gateway(), judge=_model(server, "judge")).run(
        ITEMS[1:2], _model(server, "hedger"), circular=False
    )
    only_pass = with_judge[0][0].passes[0]
    assert (only_pass.extracted, only_pass.extracted_by, only_pass.correct) == ("B", "llm", True)
    assert with_judge[1].extracted_by == {"llm": 1}
    without = AnsweringEngine(Gateway()).run(ITEMS[1:2], _model(server, "hedger"), circular=False)
    assert (without[0][0].passes[0].extracted, without[0][0].passes[0].extracted_by) == (
        "Z",
        "none",
    )
    unhelpful = AnsweringEngine(Gateway(), judge=_model(server, "always-a-judge"), judge_tries=2)
    server.script.rules.append(Rule("I am not sure.", model="always-a-judge"))
    result = unhelpful.run(ITEMS[1:2], _model(server, "hedger"), circular=False)[0][0].passes[0]
    assert (result.extracted, result.extracted_by, result.correct) == ("Z", "none", False)


def test_a_chinese_item_is_asked_and_judged_in_chinese(server):
    """A twin's prompt is Chinese (`mcq_zh`); a reply that names no option is read by the judge
    with the Chinese form of its prompt, which restates the options in Chinese."""
    server.script.rules[:0] = [
        Rule("可能是乙，也可能是丙。", model="hedger-zh"),
        Rule("B", model="judge-zh", pattern="你的输出"),
    ]
    item = MCQItem("z1", "哪个是水果？", ("汽车", "苹果", "石头"), "B", language="zh")
    engine = AnsweringEngine(Gateway(), judge=_model(server, "judge-zh"))
    results, _ = engine.run([item], _model(server, "hedger-zh"), circular=False)
    only_pass = results[0].passes[0]
    assert (only_pass.extracted, only_pass.extracted_by, only_pass.correct) == ("B", "llm", True)
    asked = [b for b in server.stats.bodies if b["model"] == "hedger-zh"][-1]
    judged = [b for b in server.stats.bodies if b["model"] == "judge-zh"][-1]
    assert "问题：哪个是水果？" in asked["messages"][-1]["content"]
    prompt = judged["messages"][-1]["content"]
    assert "选项：A. 汽车 B. 苹果 C. 石头" in prompt and "回答：可能是乙" in prompt


def test_failures_are_recorded_not_guessed(server):
    server.inject("400", times=1, model="oracle")
    results, report = AnsweringEngine(Gateway()).run(ITEMS[:1], _model(server, "oracle"))
    first = results[0].passes[0]
    assert first.error_kind == "bad_request" and "400" in first.error
    assert first.extracted is None and not first.correct
    assert first.prompt_id.startswith("mcq@") and first.prompt_id.endswith(first.prompt_hash)
    assert report.errors == {"bad_request": 1} and len(results[0].passes) == 1


def test_blind_baselines_through_the_engine():
    items = [
        MCQItem(f"b{i}", f"Question {i}?", ("short", "a much longer option", "mid size"), "B")
        for i in range(20)
    ]
    report = AnsweringEngine(Gateway()).run(items, "blind/longest")[1]
    assert (
        report.sees == "nothing"
        and report.vanilla_accuracy == 1.0
        and report.circular_accuracy == 1.0
    )
    letter = AnsweringEngine(Gateway()).run(items, "blind/letter-A")[1]
    assert letter.vanilla_accuracy == 0.0 and letter.calls_made == 20


def test_chance_for_the_mmbench_mix():
    counts = [2] * 77 + [3] * 221 + [4] * 1462
    chance = analytic_chance(counts)
    assert chance.random_circular == pytest.approx(0.0188, abs=0.0001)
    assert chance.random_vanilla == pytest.approx((77 / 2 + 221 / 3 + 1462 / 4) / 1760)
    assert chance.constant_circular["A"] == 0.0
    assert chance.constant_vanilla["D"] == pytest.approx(1462 / 4 / 1760)
    with pytest.raises(ValueError):
        analytic_chance([])


def test_empirical_chance_runs_every_blind_baseline():
    from benchfoundry.answering.chance import BLIND_BASELINES, empirical_chance

    items = [
        MCQItem(
            f"e{i}",
            f"Which word is long number {i}?",
            ("tiny", "an extraordinarily long option", "mid"),
            "B" if i % 4 else "A",
        )
        for i in range(40)
    ]
    reports = empirical_chance(Gateway(), items)
    assert set(reports) == set(BLIND_BASELINES)
    assert reports["blind/frequent"].vanilla_accuracy == 0.75, (
        "the most frequent key is B, 30 of 40"
    )
    assert reports["blind/longest"].vanilla_accuracy == 0.75
    assert (
        reports["blind/letter-A"].vanilla_accuracy == 0.25
        and reports["blind/letter-A"].circular_accuracy == 0.0
    )
    assert all(r.sees == "nothing" and not r.with_image for r in reports.values())
