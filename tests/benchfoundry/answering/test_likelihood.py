import pytest

from benchfoundry.answering.engine import MCQItem
from benchfoundry.answering.likelihood import rank_by_likelihood
from benchfoundry.gateway import Gateway, NotSupportedError

pytestmark = pytest.mark.slow


def test_ranking_with_the_packaged_model_reports_its_scoring():
    items = [
        MCQItem(
            "l1",
            "What colour is the sky on a clear day?",
            ("blue", "a loud noise from the kitchen"),
            "A",
        )
    ]
    gateway = Gateway()
    summed = rank_by_likelihood(gateway, items, "smollm2", normalised=False)[0]
    normalised = rank_by_likelihood(gateway, items, "smollm2", normalised=True)[0]
    assert (summed.scoring, normalised.scoring) == ("summed", "normalised")
    assert summed.scores.summed == normalised.scores.summed
    assert summed.chosen == "A" and summed.correct, (
        "one short likely word beats a long unlikely phrase when summed"
    )
    assert normalised.chosen in "AB" and normalised.prompt_id.startswith("likelihood@")


def test_http_models_cannot_rank():
    with pytest.raises(NotSupportedError):
        rank_by_likelihood(
            Gateway(), [MCQItem("x", "q?", ("a", "b"), "A")], "openai/m@http://127.0.0.1:9/v1"
        )


def test_a_model_answering_by_likelihood_takes_one_call_for_every_circular_pass():
    from benchfoundry.answering.engine import AnsweringEngine
    from benchfoundry.gateway.assemble import default_catalogue

    catalogue = default_catalogue()
    assert catalogue["smollm2"].options["mcq"] == "likelihood"
    items = [
        MCQItem("c1", "What colour is the sky on a clear day?", ("blue", "green", "red"), "A"),
        MCQItem("c2", "Which animal barks?", ("a cat", "a dog"), "B"),
    ]
    gateway = Gateway(catalogue)
    results, report = AnsweringEngine(gateway, with_image=False).run(items, "smollm2")
    # One ranking answers every rotation: asking every pass would also take one call each.
    assert report.calls_made == 2 and report.calls_if_every_pass == 2
    assert gateway.ledger.totals().calls == 2
    for result in results:
        passes = result.passes
        assert {p.extracted_by for p in passes} == {"likelihood"}
        # Every pass names the same original option, whatever the rotation.
        chosen = {p.option_order["ABC".index(p.extracted)] for p in passes}
        assert len(chosen) == 1
        assert result.circular_correct == (chosen == {result.item.answer})
        assert len(passes) == (len(result.item.options) if result.vanilla_correct else 1)
        assert passes[0].raw_response.startswith("log-likelihood per token: A ")
    # A Chinese twin is ranked after a Chinese prompt (`likelihood_zh`).
    twin = MCQItem("c1@zh", "晴天的天空是什么颜色？", ("蓝色", "绿色", "红色"), "A", language="zh")
    (result,), _ = AnsweringEngine(gateway, with_image=False).run([twin], "smollm2")
    assert result.passes[0].prompt.startswith("问题：晴天的天空是什么颜色？")
    assert result.passes[0].prompt_id.startswith("likelihood_zh@")


def test_likelihood_set_on_a_model_that_cannot_score_is_a_config_error():
    from benchfoundry.answering.engine import AnsweringEngine
    from benchfoundry.gateway import ModelConfigError
    from benchfoundry.gateway.models import ModelSpec

    spec = ModelSpec(name="http-lik", provider="openai", model="m", base_url="http://127.0.0.1:9/v1",
                     options={"mcq": "likelihood"})  # fmt: skip
    gateway = Gateway({"http-lik": spec})
    item = MCQItem("x", "Which?", ("a", "b"), "A")
    with pytest.raises(ModelConfigError, match="answer by likelihood"):
        AnsweringEngine(gateway, with_image=False).run([item], "http-lik")
