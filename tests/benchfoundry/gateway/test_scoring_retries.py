"""Questions scored together through the gateway: a failure worth retrying asks again only the
questions that had it; the others are kept (and cached) from the attempt that answered them."""

from collections import Counter

import pytest

from benchfoundry.core.clock import ManualClock
from benchfoundry.gateway import Gateway, ModelCallError, ResponseCache
from benchfoundry.gateway import providers as provider_registry
from benchfoundry.gateway.errors import ProviderError, permanent
from benchfoundry.gateway.models import ModelSpec
from benchfoundry.gateway.providers import Provider
from benchfoundry.gateway.types import OptionScores


class FlakyScorer(Provider):
    """Scores options by their length; a question whose first option is "flaky" fails with an
    overloaded server `options["flaky_failures"]` times first, one whose first option is
    "broken" always fails with a bad request."""

    sees = "nothing"
    asked: Counter = Counter()

    def generate(self, parts, params, mcq):
        raise permanent("unsupported", "this model only scores options")

    def score_options(self, parts, options):
        FlakyScorer.asked[options[0]] += 1
        if options[0] == "broken":
            raise permanent("bad_input", "cannot read these options")
        if options[0] == "flaky" and FlakyScorer.asked["flaky"] <= self.spec.options["failures"]:
            raise ProviderError("server_error", "overloaded", transient=True)
        lengths = [float(-len(o)) for o in options]
        return OptionScores(
            options=list(options), summed=lengths, normalised=lengths, n_tokens=[1] * len(options)
        )


@pytest.fixture
def flaky(monkeypatch):
    monkeypatch.setitem(provider_registry.PROVIDERS, "flaky", f"{__name__}:FlakyScorer")
    FlakyScorer.asked = Counter()
    return FlakyScorer


def _questions():
    return [
        ([{"type": "text", "value": f"Question {i}?"}], options)
        for i, options in enumerate(
            [["one", "three"], ["flaky", "b"], ["four", "x"], ["broken", "y"]]
        )
    ]


def _gateway(tmp_path, failures: int) -> tuple[Gateway, ManualClock]:
    spec = ModelSpec(name="f", provider="flaky", max_attempts=3, options={"failures": failures})
    clock = ManualClock()
    return Gateway({"f": spec}, ResponseCache(tmp_path / "cache.sqlite"), clock=clock), clock


def test_a_retry_asks_again_only_the_question_that_failed(tmp_path, flaky):
    gateway, clock = _gateway(tmp_path, failures=1)
    results = gateway.score_options_many("f", _questions())
    assert [type(r).__name__ for r in results] == ["OptionScores"] * 3 + ["ModelCallError"]
    assert results[1].options == ["flaky", "b"] and results[1].best() == 1
    assert results[3].kind == "bad_input"
    assert flaky.asked == {"one": 1, "flaky": 2, "four": 1, "broken": 1}
    assert len(clock.slept) == 1, "one backoff before the second attempt"


def test_questions_answered_are_kept_when_another_fails_every_attempt(tmp_path, flaky):
    gateway, _ = _gateway(tmp_path, failures=99)
    results = gateway.score_options_many("f", _questions())
    assert isinstance(results[1], ModelCallError)
    assert (results[1].kind, results[1].attempts) == ("server_error", 3)
    assert isinstance(results[0], OptionScores) and isinstance(results[2], OptionScores)
    assert flaky.asked == {"one": 1, "flaky": 3, "four": 1, "broken": 1}
    # Asked again: the answered questions come from the cache, only the failed ones are asked.
    again = gateway.score_options_many("f", _questions())
    assert again[0] == results[0] and again[2] == results[2]
    assert flaky.asked == {"one": 1, "flaky": 6, "four": 1, "broken": 2}
