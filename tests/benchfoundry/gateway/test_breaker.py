"""The gateway's circuit breaker and its adaptive concurrency: a server that fails every call
is cut short after the breaker's count (with real HTTP to the test server), an answer between
failures keeps it closed, a 429 paces rather than counts, and the number of calls at once
halves on a 429 and grows back as calls go through."""

from __future__ import annotations

import pytest

from benchfoundry.core.clock import ManualClock
from benchfoundry.devtools.testserver import Refusal, Rule, Script, TestServer
from benchfoundry.gateway import Gateway, ModelCallError, ModelSpec
from benchfoundry.gateway.breaker import Breaker
from benchfoundry.gateway.limits import AdaptiveSlots


def _spec(server: TestServer, **kw) -> ModelSpec:
    return ModelSpec(
        name="m", provider="openai", model="m", base_url=server.base_url, concurrency=1,
        max_attempts=5, **kw,
    )  # fmt: skip


def test_a_server_failing_every_call_is_cut_short_after_the_breakers_count():
    with TestServer(Script(rules=[Rule(Refusal(500, "boom"))])) as server:
        gateway = Gateway(clock=ManualClock())  # backoff waits cost no real time
        gateway.breakers_on = True
        spec = _spec(server, breaker_after=7)
        kinds = []
        for i in range(4):
            with pytest.raises(ModelCallError) as caught:
                gateway.generate(spec, f"question {i}")
            kinds.append((caught.value.kind, caught.value.attempts))
        assert server.stats.requests == 7, "five tries of the first call, two of the second"
    assert kinds == [("server_error", 5), ("server_failing", 2), ("server_failing", 0),
                     ("server_failing", 0)]  # fmt: skip
    assert (
        "7 calls in a row failed (server errors (the last HTTP 500))" in gateway.breaker(spec).why
    )


def test_without_breakers_every_call_is_retried_to_its_end():
    with TestServer(Script(rules=[Rule(Refusal(503, "busy"))])) as server:
        gateway = Gateway(clock=ManualClock())
        for i in range(2):
            with pytest.raises(ModelCallError, match="server_error"):
                gateway.generate(_spec(server, breaker_after=3), f"q{i}")
        assert server.stats.requests == 10


def test_an_answer_or_a_refusal_between_failures_keeps_it_closed_and_429s_do_not_count():
    breaker = Breaker(3)
    for _ in range(2):
        breaker.failed("server_error", "HTTP 500: x")
    breaker.answered()
    breaker.failed("timeout", "no answer within 2s")
    breaker.failed("timeout", "no answer within 2s")
    breaker.failed("bad_request", "HTTP 400: too many images")  # the server answered
    breaker.failed("timeout", "no answer within 2s")
    for _ in range(5):
        breaker.failed("rate_limited", "HTTP 429: slow down")
    breaker.failed("connection", "reset")  # another kind starts a run of its own
    breaker.failed("timeout", "no answer within 2s")
    assert not breaker.open
    breaker.failed("timeout", "no answer within 2s")
    breaker.failed("timeout", "no answer within 2s")
    assert breaker.open and "no answer in time" in breaker.why


def test_calls_at_once_halve_on_a_429_and_grow_back():
    clock = ManualClock()
    slots = AdaptiveSlots(16, clock, calm_s=1.0)
    slots.throttled()
    slots.throttled()  # the same burst of 429s: halved once
    assert slots.limit == 8
    clock.advance(1.5)
    slots.throttled()
    assert slots.limit == 4 and slots.lowest == 4
    for _ in range(4):
        slots.succeeded()
    assert slots.limit == 5, "one more after as many calls in a row as the limit"
    for _ in range(200):
        slots.succeeded()
    assert slots.limit == 16, "back to the most, never above"
