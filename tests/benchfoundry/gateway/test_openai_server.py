"""The OpenAI-compatible provider against the real test server over HTTP."""

import io
import json
import threading

import pytest
from PIL import Image

from benchfoundry.core.clock import ManualClock
from benchfoundry.devtools.testserver import Rule, Script, TestServer
from benchfoundry.gateway import (
    Gateway,
    GenerateParams,
    ModelCallError,
    ModelSpec,
    Request,
    ResponseCache,
)
from benchfoundry.gateway.limits import ModelLimiter
from benchfoundry.gateway.usage import UsageLedger

SECRET = "sk-benchfoundry-test-0123456789abcdef"


@pytest.fixture
def server():
    script = Script(
        rules=[
            Rule(reply="B", pattern="colour"),
            Rule(reply='{"answer": "C"}', model="json-model"),
        ],
        default="A",
    )
    with TestServer(script) as running:
        yield running


@pytest.fixture
def secret(monkeypatch):
    monkeypatch.setenv("BENCH_TEST_API_KEY", SECRET)
    return SECRET


def _spec(server, **kw):
    base = {
        "name": "test-model",
        "provider": "openai",
        "model": "scripted",
        "base_url": server.base_url,
        "api_key_env": "BENCH_TEST_API_KEY",
        "price_in_per_mtok": 1.0,
        "price_out_per_mtok": 2.0,
    }
    return ModelSpec(**{**base, **kw})


def _png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (40, 30), (200, 10, 10)).save(buffer, format="PNG")
    return buffer.getvalue()


def test_text_and_image_round_trip(server, secret):
    gateway = Gateway()
    spec = _spec(server)
    reply = gateway.generate(spec, "What colour is it?")
    assert (reply.text, reply.cached, reply.attempts, reply.tokens_out) == ("B", False, 1, 1)
    assert reply.cost == pytest.approx((reply.tokens_in * 1.0 + 2.0) / 1e6)
    image = _png()
    reply = gateway.generate(
        spec,
        [{"type": "image", "value": image}, {"type": "text", "value": "Describe."}],
        GenerateParams(system="Be brief.", max_tokens=7),
    )
    assert reply.text == "A"
    body = server.stats.bodies[-1]
    user = body["messages"][-1]["content"]
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert user[0]["image_url"]["url"].startswith("data:image/png;base64,") and user[1] == {
        "type": "text",
        "text": "Describe.",
    }
    assert body["max_tokens"] == 7 and body["temperature"] == 0.0
    assert server.stats.headers[-1]["authorization"] == f"Bearer {secret}"


def test_structured_output_is_requested_with_the_schema(server, secret):
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
    }
    reply = Gateway().generate(
        _spec(server, model="json-model"), "Pick one.", GenerateParams(json_schema=schema)
    )
    assert json.loads(reply.text) == {"answer": "C"}
    assert server.stats.bodies[-1]["response_format"]["json_schema"]["schema"] == schema


@pytest.mark.parametrize("fault", ["429", "500", "503", "drop", "malformed", "empty"])
def test_each_transient_fault_is_retried(server, secret, fault):
    clock = ManualClock()
    gateway = Gateway(clock=clock)
    server.inject(fault, retry_after=0.3)
    reply = gateway.generate(_spec(server), f"survive {fault}")
    assert (reply.text, reply.attempts) == ("A", 2)
    assert server.stats.requests == 2
    assert len(clock.slept) >= 1, "a backoff before the second attempt"
    if fault == "429":
        assert sum(clock.slept) >= 0.3, "Retry-After was honoured"
    usage = gateway.ledger.entries[("", "test-model")]
    assert sum(usage.errors.values()) == 1


def test_timeouts_and_exhausted_attempts_fail_with_a_typed_error(server, secret):
    server.inject("slow", times=3, delay=1.0)
    with pytest.raises(ModelCallError) as caught:
        Gateway().generate(_spec(server, timeout_s=0.3, max_attempts=3), "too slow")
    assert (caught.value.kind, caught.value.attempts) == ("timeout", 3)
    # With timeout_retries (an evaluation's gateway: 1), a call left hanging is asked once
    # more, not max_attempts times: a hung request mostly hangs again.
    server.inject("slow", times=2, delay=1.0)
    with pytest.raises(ModelCallError) as caught:
        Gateway().generate(
            _spec(server, timeout_s=0.3, max_attempts=3, timeout_retries=1), "too slow"
        )
    assert (caught.value.kind, caught.value.attempts) == ("timeout", 2)
    assert server.stats.requests == 5
    server.inject("503", times=2)
    with pytest.raises(ModelCallError, match="server_error"):
        Gateway().generate(_spec(server, max_attempts=2), "down")


def test_a_bad_request_is_not_retried(server, secret):
    server.inject("400")
    with pytest.raises(ModelCallError) as caught:
        Gateway().generate(_spec(server), "hello")
    assert caught.value.kind == "bad_request" and caught.value.attempts == 1
    assert server.stats.requests == 1


def test_second_run_is_served_from_the_cache(server, secret, tmp_path):
    prompts = [f"question {i}" for i in range(12)]
    first = Gateway(cache=ResponseCache(tmp_path / "cache.sqlite"))
    answers = [first.generate(_spec(server), p).text for p in prompts]
    first.generate(_spec(server), "sampled", GenerateParams(temperature=0.8, seed=3))
    assert server.stats.requests == 13
    second = Gateway(cache=ResponseCache(tmp_path / "cache.sqlite"))
    replayed = [second.generate(_spec(server), p) for p in prompts]
    second.generate(_spec(server), "sampled", GenerateParams(temperature=0.8, seed=3))
    assert server.stats.requests == 13, "no request reached the server"
    assert [r.text for r in replayed] == answers and all(r.cached and r.cost == 0 for r in replayed)
    second.generate(_spec(server), "sampled", GenerateParams(temperature=0.8, seed=4))
    assert server.stats.requests == 14, "another seed is another call"
    assert second.ledger.entries[("", "test-model")].cached == 13


def test_concurrency_limit_holds(secret):
    with TestServer(latency_s=0.1) as running:
        gateway = Gateway()
        spec = _spec(running, concurrency=3)
        results = gateway.generate_many([Request(spec, f"q{i}") for i in range(15)], workers=10)
        assert all(r.text == "A" for r in results)
        assert running.stats.max_in_flight == 3
        assert gateway.limiter(spec).max_in_flight == 3


def test_request_rate_limit_holds(secret):
    with TestServer(max_rps=10) as running:
        spec = _spec(running, rpm=600, concurrency=8)
        results = Gateway().generate_many([Request(spec, f"q{i}") for i in range(20)], workers=8)
        assert all(not isinstance(r, ModelCallError) for r in results)
        assert running.stats.by_status.get("429", 0) <= 4, (
            "pacing keeps the server from refusing much"
        )


def test_the_limiter_paces_requests_and_tokens_on_its_clock():
    """20 requests at 600 per minute: the first goes at once, each later one 0.1 s after the
    last; a budget of 600 tokens per minute lets 100-token calls burst to 600, then one every
    10 s; a pause holds the next call for its length."""
    clock = ManualClock()
    limiter = ModelLimiter(concurrency=4, rpm=600, tpm=None, clock=clock)
    start = clock.now()
    for _ in range(20):
        with limiter.slot(estimated_tokens=10):
            pass
    assert clock.now() - start == pytest.approx(1.9)
    tokens = ModelLimiter(concurrency=1, rpm=None, tpm=600, clock=clock)
    start = clock.now()
    for _ in range(8):
        with tokens.slot(estimated_tokens=100):
            pass
    assert clock.now() - start == pytest.approx(20.0)
    limiter.pause(5.0)
    start = clock.now()
    with limiter.slot(estimated_tokens=1):
        pass
    assert clock.now() - start == pytest.approx(5.0)


def test_failures_in_a_batch_are_values(server, secret):
    server.inject("500", times=2, model="scripted")
    results = Gateway().generate_many(
        [Request(_spec(server, max_attempts=1), "x"), Request(_spec(server, max_attempts=1), "y")],
        workers=1,
    )
    assert all(isinstance(r, ModelCallError) for r in results)


def test_the_secret_appears_in_no_file_or_error(server, secret, tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    ledger = UsageLedger()
    gateway = Gateway(cache=cache, ledger=ledger, stage="filter")
    gateway.generate(_spec(server), "hello")
    server.inject("500", times=5)
    with pytest.raises(ModelCallError) as caught:
        gateway.generate(_spec(server, max_attempts=2), "fails")
    cache.export_to(tmp_path / "shared.sqlite")
    ledger.write(tmp_path)
    (tmp_path / "usage.md").write_text(ledger.markdown())
    assert SECRET not in str(caught.value)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert json.loads((tmp_path / "usage.json").read_text())["filter"]["test-model"]["calls"] == 2


def test_cache_export_and_merge(server, secret, tmp_path):
    first = ResponseCache(tmp_path / "a.sqlite")
    Gateway(cache=first).generate(_spec(server), "shared question")
    assert first.export_to(tmp_path / "exported.sqlite") == 1
    other = ResponseCache(tmp_path / "b.sqlite")
    assert other.merge_from(tmp_path / "exported.sqlite") == 1
    assert other.merge_from(tmp_path / "exported.sqlite") == 0
    before = server.stats.requests
    assert Gateway(cache=other).generate(_spec(server), "shared question").cached
    assert server.stats.requests == before


def test_parallel_callers_share_one_pause_after_429(secret):
    with TestServer(latency_s=0.05) as running:
        running.inject("429", retry_after=0.5)
        gateway = Gateway()
        spec = _spec(running, concurrency=4)
        barrier = threading.Barrier(4)

        def call(i):
            barrier.wait()
            return gateway.generate(spec, f"p{i}")

        threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert running.stats.by_status["429"] == 1 and running.stats.by_status["200"] == 4


def test_a_clip_goes_as_frames_or_as_the_clip_itself(server, secret, tmp_path):
    """A clip question reaches an image model as N frames sampled from its stretch and a
    video model (`video: true`) as one `video_url` part, over real HTTP; each is its own call."""
    import numpy as np

    from benchfoundry.core.video import encode_clip

    clip = encode_clip([np.full((48, 64, 3), 10 * i, np.uint8) for i in range(24)], fps=12)
    shown = [
        {"type": "video", "value": clip, "start": 0.5, "end": 1.5, "keyframe": _png()},
        {"type": "text", "value": "What happens?"},
    ]
    gateway = Gateway(cache=ResponseCache(tmp_path / "cache.sqlite"))
    gateway.generate(_spec(server, frames=3), shown)
    parts = server.stats.bodies[-1]["messages"][-1]["content"]
    assert [p["type"] for p in parts] == ["image_url"] * 3 + ["text"]
    urls = [p["image_url"]["url"] for p in parts[:3]]
    assert len(set(urls)) == 3 and all(u.startswith("data:image/png;base64,") for u in urls)
    # The same frames again: answered from the cache; a model shown the clip is asked anew.
    assert gateway.generate(_spec(server, frames=3), shown).cached
    assert len(server.stats.bodies) == 1
    gateway.generate(_spec(server, video=True), shown)
    parts = server.stats.bodies[-1]["messages"][-1]["content"]
    assert [p["type"] for p in parts] == ["video_url", "text"]
    assert parts[0]["video_url"]["url"].startswith("data:video/mp4;base64,")
    # Only the stretch asked about is sent (nothing after it: an action prediction's answer).
    import base64

    from benchfoundry.core.video import inspect_clip

    sent = base64.b64decode(parts[0]["video_url"]["url"].split(",", 1)[1])
    info = inspect_clip(sent)
    assert info.frames == 12 and info.duration == 1.0


def test_several_images_and_a_clip_reach_the_server_as_vllm_takes_them(secret, tmp_path):
    """Two images and a clip in one message arrive as two `image_url` parts and one
    `video_url` part, each decoded by the server; past the server's per-prompt limit (vLLM's
    `limit_mm_per_prompt`) or with a part it cannot decode, the call fails with the server's
    reason, never a silent answer."""
    import numpy as np

    from benchfoundry.core.video import encode_clip

    clip = encode_clip([np.full((48, 64, 3), 10 * i, np.uint8) for i in range(24)], fps=12)
    red = _png()
    buffer = io.BytesIO()
    Image.new("RGB", (20, 16), (0, 0, 200)).save(buffer, format="PNG")
    shown = [
        {"type": "image", "value": red},
        {"type": "image", "value": buffer.getvalue()},
        {"type": "video", "value": clip, "start": 0.0, "end": 1.0, "keyframe": red},
        {"type": "text", "value": "Which image matches the clip?"},
    ]
    with TestServer(limit_mm_per_prompt={"image": 2, "video": 1}) as server:
        gateway = Gateway(cache=ResponseCache(tmp_path / "cache.sqlite"))
        assert gateway.generate(_spec(server, video=True), shown).text == "A"
        request = server.stats.bodies[-1]["messages"][-1]["content"]
        assert [p["type"] for p in request] == ["image_url", "image_url", "video_url", "text"]
        assert server.stats.by_status["200"] == 1
        # Each as the server decoded it: the images' sizes, the clip's 12 frames of 1 s.
        from benchfoundry.devtools.testserver_media import media_of

        media = media_of(server.stats.bodies[-1]["messages"], {})
        assert [(m.kind, m.width, m.height) for m in media[:2]] == [
            ("image", 40, 30),
            ("image", 20, 16),
        ]
        assert media[2].kind == "video" and media[2].frames == 12
        # To an image model the clip goes as two frames: four images, over the limit; the
        # server's 400 and its reason reach the caller.
        with pytest.raises(ModelCallError, match="At most 2 image"):
            gateway.generate(_spec(server, frames=2), shown)
        with pytest.raises(ModelCallError, match="cannot decode the image"):
            gateway.generate(
                _spec(server),
                [
                    {"type": "image", "value": b"\x89PNG\r\n\x1a\nbroken"},
                    {"type": "text", "value": "?"},
                ],
            )
        assert server.stats.by_status["400"] == 2
