"""A real OpenAI-compatible HTTP server on loopback, with scripted answers and injected faults.

Tests and benchmarks talk to it over real HTTP; users can point a build at it to dry-run.
It answers `POST /v1/chat/completions` (text, image and video parts, checked as vLLM checks
them, `response_format`) and
`GET /v1/models`, counts what it receives, and on demand answers 429 with Retry-After, 500 or
503, answers too slowly, drops the connection, sends malformed JSON or an empty `choices` list.
"""

from __future__ import annotations

import contextlib
import json
import random
import socket
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from benchfoundry.devtools.testserver_media import MediaError, media_of
from benchfoundry.devtools.testserver_script import (  # noqa: F401  (tests import them from here)
    ChatRequest,
    Oracle,
    Refusal,
    Reply,
    Rule,
    Script,
)

FAULTS = ("400", "429", "500", "503", "slow", "drop", "malformed", "empty")
# Names a user may give with a rate (`serve-test --faults 429:0.1,5xx:0.05`): `5xx` is 500 or
# 503 at random, `timeout` an answer slower than the client waits.
FAULT_ALIASES = {"5xx": ("500", "503"), "timeout": ("slow",)}


def parse_fault_rates(text: str) -> dict[str, float]:
    """`KIND:RATE,...` as {kind: share of requests}; kinds are FAULTS or FAULT_ALIASES."""
    rates: dict[str, float] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        kind, sep, rate_text = item.partition(":")
        known = (*FAULTS, *FAULT_ALIASES)
        if not sep or kind not in known:
            raise ValueError(f"fault '{item}' is not KIND:RATE with KIND one of {', '.join(known)}")
        try:
            rate = float(rate_text)
        except ValueError:
            raise ValueError(f"fault '{item}': the rate must be a number in [0, 1]") from None
        if not 0 <= rate <= 1:
            raise ValueError(f"fault '{item}': the rate must be a number in [0, 1]")
        rates[kind] = rates.get(kind, 0.0) + rate
    if sum(rates.values()) > 1:
        raise ValueError(f"fault rates add up to {sum(rates.values()):g}, more than 1")
    return rates


@dataclass
class Fault:
    kind: str
    model: str | None = None
    retry_after: float | None = 1.0
    delay: float = 5.0


class Stats:
    """What the server saw, for assertions on the server side."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests = 0
        self.by_model: Counter[str] = Counter()
        self.by_status: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.bodies: list[dict[str, Any]] = []
        self.faults: Counter[str] = Counter()  # injected, by kind (429-bare: no Retry-After)
        self.headers: list[dict[str, str]] = []


def _text_of(messages: list[dict[str, Any]]) -> tuple[str, str | None, int]:
    texts, system, images = [], None, 0
    for message in messages:
        content = message.get("content")
        if message.get("role") == "system":
            system = content if isinstance(content, str) else None
            continue
        if isinstance(content, str):
            texts.append(content)
            continue
        for part in content or []:
            if part.get("type") == "text":
                texts.append(part.get("text", ""))
            elif part.get("type") in ("image_url", "video_url"):  # vLLM and SGLang take both
                images += 1
    return "\n".join(texts), system, images


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    # Connections waiting to be accepted: a client opening 64 at once must not have most of
    # them dropped and retried a second later (the default is 5).
    request_queue_size = 256

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (timeouts, drops) is part of the script, not an error."""


class TestServer:
    """Start with `with TestServer(script) as server:`; `server.base_url` is the /v1 URL."""

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        script: Script | None = None,
        latency_s: float = 0.0,
        max_rps: float | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        fault_rates: dict[str, float] | None = None,
        fault_delay: float = 5.0,
        seed: int = 0,
        limit_mm_per_prompt: dict[str, int] | None = None,
        served: Sequence[str] | None = None,
        api_key: str | None = None,
    ) -> None:
        """`fault_rates` (kind -> share, see `parse_fault_rates`) injects faults at random, drawn
        from `seed`, besides those queued with `inject`. `limit_mm_per_prompt` caps images and
        clips per request as vLLM's option does ({"image": 4, "video": 1}); media parts are
        checked as vLLM checks them either way (`testserver_media`). `served` names the only
        models it serves (another gets 404, as vLLM answers), `api_key` the only bearer token it
        accepts (another gets 401)."""
        self.served = set(served) if served is not None else None
        self.api_key = api_key
        self.script = script or Script()
        self.limit_mm_per_prompt = dict(limit_mm_per_prompt or {})
        self.fault_rates = dict(fault_rates or {})
        self.fault_delay = fault_delay
        self._random = random.Random(seed)
        self.latency_s = latency_s
        self.max_rps = max_rps
        self.stats = Stats()
        self._faults: deque[Fault] = deque()
        self._window: deque[float] = deque()
        self._lock = threading.Lock()
        self._httpd = _QuietServer((host, port), self._handler())
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def inject(
        self,
        kind: str,
        times: int = 1,
        model: str | None = None,
        retry_after: float = 1.0,
        delay: float = 5.0,
    ) -> None:
        """Queue `times` faults of `kind` (one of FAULTS) for the next matching requests."""
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r}; known: {', '.join(FAULTS)}")
        with self._lock:
            self._faults.extend(Fault(kind, model, retry_after, delay) for _ in range(times))

    def _take_fault(self, model: str) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.model is None or fault.model == model:
                    self._faults.remove(fault)
                    self._count(fault)
                    return fault
            draw = self._random.random()
            for kind, rate in self.fault_rates.items():
                if draw < rate:
                    kinds = FAULT_ALIASES.get(kind, (kind,))
                    chosen = kinds[self._random.randrange(len(kinds))]
                    # a drawn 429 says how long to wait half the time, as servers do or do not
                    wait = self._random.choice((None, 0.2)) if chosen == "429" else 1.0
                    fault = Fault(chosen, retry_after=wait, delay=self.fault_delay)
                    self._count(fault)
                    return fault
                draw -= rate
        return None

    def _count(self, fault: Fault) -> None:
        bare = fault.kind == "429" and fault.retry_after is None
        with self.stats.lock:
            self.stats.faults["429-bare" if bare else fault.kind] += 1

    def _over_rate(self) -> float | None:
        """Seconds until a request is allowed again, when the rate limit is exceeded."""
        if self.max_rps is None:
            return None
        with self._lock:
            now = time.monotonic()
            while self._window and now - self._window[0] >= 1.0:
                self._window.popleft()
            if len(self._window) >= self.max_rps:
                return 1.0 - (now - self._window[0])
            self._window.append(now)
        return None

    def start(self) -> TestServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="openai-test-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> TestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out as two writes: with Nagle's algorithm on, the body waited
            # for the client's delayed ACK, 40 ms an answer (as no real server makes it wait).
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def _send(
                self, status: int, payload: Any, headers: dict[str, str] | None = None
            ) -> None:
                body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                # counted before the body goes out: a client that has read its answer finds it
                # counted
                with server.stats.lock:
                    server.stats.by_status[str(status)] += 1
                self.wfile.write(body)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    names = sorted(server.served) if server.served is not None else ["scripted"]
                    self._send(
                        200,
                        {"object": "list", "data": [{"id": n, "object": "model"} for n in names]},
                    )
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "request body is not JSON"}})
                    return
                stats = server.stats
                with stats.lock:
                    stats.requests += 1
                    stats.by_model[body.get("model", "")] += 1
                    stats.bodies.append(body)
                    stats.headers.append({k.lower(): v for k, v in self.headers.items()})
                    stats.in_flight += 1
                    stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
                try:
                    self._answer(body)
                finally:
                    with stats.lock:
                        stats.in_flight -= 1

            def _refused(self, model: str) -> bool:
                """401 for a key it does not accept, 404 for a model it does not serve."""
                if server.api_key is not None:
                    given = self.headers.get("Authorization", "")
                    if given != f"Bearer {server.api_key}":
                        self._send(401, {"error": {"message": "Incorrect API key provided",
                                                   "type": "invalid_request_error",
                                                   "code": "invalid_api_key"}})  # fmt: skip
                        return True
                if server.served is not None and model not in server.served:
                    self._send(404, {"error": {"message": f"The model `{model}` does not exist.",
                                               "type": "NotFoundError", "code": 404}})  # fmt: skip
                    return True
                return False

            def _answer(self, body: dict[str, Any]) -> None:
                model = body.get("model", "")
                if self._refused(model):
                    return
                wait = server._over_rate()
                if wait is not None:
                    self._send(
                        429,
                        {"error": {"message": "rate limit exceeded"}},
                        {"Retry-After": f"{wait:.3f}"},
                    )
                    return
                fault = server._take_fault(model)
                if fault is not None and self._fault(fault):
                    return
                if server.latency_s:
                    time.sleep(server.latency_s)
                text, system, n_images = _text_of(body.get("messages", []))
                try:
                    media = media_of(body.get("messages", []), server.limit_mm_per_prompt)
                except MediaError as exc:
                    self._send(400, {"error": {"message": str(exc), "type": "BadRequestError"}})
                    return
                schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema")
                request = ChatRequest(model, text, system, n_images, schema, body, tuple(media))
                try:
                    reply = server.script.reply(request)
                except Exception as exc:  # a script that cannot answer this: a server error
                    self._send(500, {"error": {"message": f"script failed: {exc!r}"}})
                    return
                if isinstance(reply, Refusal):
                    self._send(
                        reply.status, {"error": {"message": reply.message, "code": reply.status}}
                    )
                    return
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": model,
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": reply},
                            }
                        ],
                        "usage": {
                            "prompt_tokens": len(text.split()) + 85 * n_images,
                            "completion_tokens": len(reply.split()),
                            "total_tokens": len(text.split()) + 85 * n_images + len(reply.split()),
                        },
                    },
                )

            def _fault(self, fault: Fault) -> bool:
                """Act out a fault; True when the request is finished."""
                if fault.kind == "429":
                    wait = (
                        {}
                        if fault.retry_after is None
                        else {"Retry-After": f"{fault.retry_after:g}"}
                    )
                    self._send(429, {"error": {"message": "rate limited"}}, wait)
                elif fault.kind in ("400", "500", "503"):
                    self._send(int(fault.kind), {"error": {"message": "server error"}})
                elif fault.kind == "slow":
                    time.sleep(fault.delay)  # the client has given up; answer into the void
                    self._send(
                        200,
                        {
                            "id": "late",
                            "object": "chat.completion",
                            "created": 0,
                            "model": "m",
                            "choices": [
                                {
                                    "index": 0,
                                    "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": "(late)"},
                                }
                            ],
                        },
                    )
                elif fault.kind == "drop":
                    self.close_connection = True
                    with contextlib.suppress(OSError):
                        self.connection.shutdown(socket.SHUT_RDWR)
                elif fault.kind == "malformed":
                    self._send(200, b'{"id": "x", "choices": [{"message": ')
                elif fault.kind == "empty":
                    self._send(
                        200,
                        {
                            "id": "x",
                            "object": "chat.completion",
                            "created": 0,
                            "model": "m",
                            "choices": [],
                        },
                    )
                return True

        return Handler
