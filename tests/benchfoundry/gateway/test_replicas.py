"""One model served by several OpenAI-compatible endpoints (vLLM replicas), against two local
test servers: calls are spread over both, one killed mid-run is left out and its calls go to the
other with none lost, and both share one cache, so a rerun makes no call."""

from __future__ import annotations

import threading

import pytest

from benchfoundry.devtools.testserver import Rule, Script, TestServer
from benchfoundry.gateway import Gateway, GenerateParams, ModelSpec, Request, ResponseCache


def _requests(n: int, start: int = 0) -> list[Request]:
    return [Request("vllm", f"question {k}", GenerateParams(max_tokens=4)) for k in range(start, n)]


def test_calls_spread_over_replicas_fail_over_and_share_one_cache(tmp_path):
    killed = threading.Event()

    def dying(request) -> str:
        # the second replica goes away after its 5th request, with calls still to come
        # (its open keep-alive connections are cut too, as a dead process's would be)
        if not killed.is_set() and second.stats.requests >= 5:
            killed.set()
            second.inject("drop", times=10_000)
            threading.Thread(target=second.stop, daemon=True).start()
        return "B"

    first = TestServer(Script(default="A")).start()
    second = TestServer(Script(rules=[Rule(dying)])).start()
    try:
        spec = ModelSpec(
            name="vllm", provider="openai", model="m", base_url=first.base_url,
            replicas=(second.base_url,), concurrency=2, timeout_s=5, max_attempts=3,
        )  # fmt: skip
        gateway = Gateway({"vllm": spec}, cache=ResponseCache(tmp_path / "cache.sqlite"))
        replies = gateway.generate_many(_requests(40), workers=2)
        assert all(not isinstance(r, Exception) for r in replies), [
            r for r in replies if isinstance(r, Exception)
        ]
        assert killed.is_set()
        by_second = sum(r.text == "B" for r in replies)
        assert 5 <= by_second <= 6, "the killed replica answered until it went"
        assert sum(r.text == "A" for r in replies) == 40 - by_second, "the other took the rest"
        # one cache for the model, whichever replica answered: a rerun makes no call
        before = first.stats.requests
        again = gateway.generate_many(_requests(40), workers=2)
        assert [r.text for r in again] == [r.text for r in replies]
        assert all(r.cached for r in again) and first.stats.requests == before
    finally:
        first.stop()
        if not killed.is_set():
            second.stop()


def test_a_replica_must_be_an_http_url():
    with pytest.raises(ValueError, match="not an http"):
        ModelSpec(name="m", provider="openai", model="m", replicas=("ftp://x",))
