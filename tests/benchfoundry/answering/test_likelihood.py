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
