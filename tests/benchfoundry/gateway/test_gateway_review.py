"""Cases found in review of the gateway: limits, masking, parameters, retries, typed failures."""

import json

import httpx
import openai
import pytest

from benchfoundry.devtools.testserver import Script, TestServer
from benchfoundry.gateway import (
    Gateway,
    GenerateParams,
    ModelCallError,
    ModelSpec,
    Request,
    ResponseCache,
    parse_model,
)
from benchfoundry.gateway.limits import TokenBucket
from benchfoundry.gateway.openai_compat import _retry_after
from benchfoundry.gateway.usage import Usage, UsageLedger


def test_token_bucket_charges_the_full_amount():
    bucket = TokenBucket(rate=10.0, capacity=600.0)
    assert bucket.take(600) == 0.0
    assert bucket.take(300) == pytest.approx(30.0, abs=0.1), "300 more tokens at 10 per second"


def test_credentials_in_an_endpoint_are_masked_everywhere(tmp_path):
    text = "openai/m@http://user:hunter2@127.0.0.1:9/v1?api-key=hunter3"
    spec = parse_model(text)
    assert "hunter" not in spec.name and spec.base_url.endswith("api-key=hunter3")
    assert spec.name == "openai/m@http://***@127.0.0.1:9/v1?api-key=***"
    ledger = UsageLedger()
    with pytest.raises(ModelCallError) as caught:
        Gateway(ledger=ledger, cache=ResponseCache(tmp_path / "c.sqlite")).generate(
            spec.model_copy(update={"max_attempts": 1}), "hi"
        )
    assert "hunter" not in str(caught.value)
    ledger.write(tmp_path)
    assert "hunter" not in (tmp_path / "usage.json").read_text()
    catalogued = ModelSpec(
        name="proxy",
        provider="openai",
        model="m",
        base_url="https://u:hunter4@proxy.example/v1?key=hunter5",
    )
    assert catalogued.display_url == "https://***@proxy.example/v1?key=***"


def test_catalogue_parameters_are_defaults_under_explicit_ones():
    with TestServer() as server:
        spec = ModelSpec(
            name="m",
            provider="openai",
            model="m",
            base_url=server.base_url,
            params={"temperature": 0.3, "system": "Be terse.", "max_tokens": 9},
        )
        Gateway().generate(spec, "q", GenerateParams(max_tokens=3))
        body = server.stats.bodies[-1]
        assert (body["temperature"], body["max_tokens"], body["messages"][0]["content"]) == (
            0.3,
            3,
            "Be terse.",
        )
    with pytest.raises(ValueError, match="temprature"):
        ModelSpec(name="x", provider="openai", model="m", params={"temprature": 1})


def test_retry_after_beyond_the_cap_fails_at_once_and_headers_are_read():
    with TestServer() as server:
        server.inject("429", retry_after=120)
        spec = ModelSpec(
            name="m", provider="openai", model="m", base_url=server.base_url, max_retry_wait_s=2
        )
        with pytest.raises(ModelCallError, match="asks to wait 120s") as caught:
            Gateway().generate(spec, "q")
        assert caught.value.attempts == 1
        server.inject("429", retry_after=None)
        assert Gateway().generate(spec, "no header").attempts == 2
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")

    def error(headers):
        return openai.RateLimitError(
            "limited", response=httpx.Response(429, headers=headers, request=request), body=None
        )

    assert _retry_after(error({"retry-after-ms": "1500"})) == 1.5
    assert _retry_after(error({"retry-after": "2"})) == 2.0
    assert 0 <= _retry_after(error({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0
    assert _retry_after(error({})) is None


def test_bad_input_is_a_typed_failure_in_place():
    results = Gateway().generate_many(
        [
            Request("blind/letter-A", [{"type": "image", "value": "/no/such/file.png"}]),
            Request("blind/letter-A", [{"type": "video", "value": "x"}]),
        ]
    )
    assert [r.kind for r in results] == ["bad_input", "bad_input"]


def test_two_specs_with_one_name_do_not_share_a_provider():
    with TestServer(Script(default="from a")) as a, TestServer(Script(default="from b")) as b:
        gateway = Gateway()
        first = ModelSpec(name="same", provider="openai", model="m", base_url=a.base_url)
        second = ModelSpec(name="same", provider="openai", model="m", base_url=b.base_url)
        assert (gateway.generate(first, "q").text, gateway.generate(second, "q").text) == (
            "from a",
            "from b",
        )


def test_a_cached_answer_carries_the_asking_model_name(tmp_path):
    with TestServer() as server:
        cache = ResponseCache(tmp_path / "c.sqlite")
        writer = ModelSpec(name="generator", provider="openai", model="m", base_url=server.base_url)
        reader = writer.model_copy(update={"name": "judge"})
        Gateway(cache=cache).generate(writer, "q")
        assert Gateway(cache=cache).generate(reader, "q").model == "judge"


def test_the_slow_fault_does_not_consume_the_script():
    with TestServer(Script(sequence=["one", "two", "three"])) as server:
        spec = ModelSpec(
            name="m",
            provider="openai",
            model="m",
            base_url=server.base_url,
            timeout_s=0.3,
            max_attempts=2,
        )
        server.inject("slow", delay=0.6)
        assert Gateway().generate(spec, "first").text == "one"
        assert Gateway().generate(spec, "second").text == "two"


def test_writing_usage_twice_does_not_double_it(tmp_path):
    ledger = UsageLedger()
    ledger.record("s", "m", Usage(calls=1, tokens_in=5))
    ledger.write(tmp_path)
    ledger.write(tmp_path)
    ledger.record("s", "m", Usage(calls=1, tokens_in=5))
    ledger.write(tmp_path)
    assert json.loads((tmp_path / "usage.json").read_text())["s"]["m"]["calls"] == 2
