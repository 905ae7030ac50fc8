"""Chat models behind any OpenAI-compatible HTTP server (OpenAI, vLLM, Ollama, the test server),
through the official `openai` client. Retries are the gateway's, so the client makes one try."""

from __future__ import annotations

import email.utils
import logging
import os
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import openai

from benchfoundry.gateway.context import GatewayContext
from benchfoundry.gateway.errors import ModelConfigError, permanent, transient
from benchfoundry.gateway.messages import Part, TextPart, VideoPart, has_images
from benchfoundry.gateway.models import ModelSpec, mask_url
from benchfoundry.gateway.providers import Provider
from benchfoundry.gateway.types import MCQ, Completion, GenerateParams

log = logging.getLogger(__name__)


class _Unreachable(Exception):
    """An endpoint that could not be reached or did not answer in time: the next one is tried."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def _retry_after(exc: openai.APIStatusError) -> float | None:
    """Seconds the server asks to wait: `retry-after-ms`, or `Retry-After` in seconds or as an
    HTTP date."""
    headers = exc.response.headers if exc.response is not None else {}
    if (millis := headers.get("retry-after-ms")) is not None:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, (when - datetime.now(UTC)).total_seconds())


def chat_messages(parts: Sequence[Part], system: str | None) -> list[dict[str, Any]]:
    """Parts as chat-completions messages: one user turn, images as base64 data URLs."""
    if has_images(parts):
        content: Any = [
            {"type": "text", "text": p.value}
            if isinstance(p, TextPart)
            else {"type": "video_url", "video_url": {"url": p.data_url()}}
            if isinstance(p, VideoPart)
            else {"type": "image_url", "image_url": {"url": p.data_url()}}
            for p in parts
        ]
    else:
        content = "\n".join(p.value for p in parts if isinstance(p, TextPart))
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    return messages + [{"role": "user", "content": content}]


DOWN_FOR_S = 30.0  # how long an endpoint that stopped answering is left out


class Endpoints:
    """The endpoints of one model, used in turn; one that fails to connect or to answer in time
    is left out for `DOWN_FOR_S` seconds (all of them, when every one is down, are tried
    again rather than none)."""

    def __init__(self, clients: list[tuple[str, openai.OpenAI]]) -> None:
        self.clients = clients
        self._down: dict[int, float] = {}
        self._next = 0
        self._lock = threading.Lock()

    def order(self) -> list[int]:
        """The endpoints to try for one call: up ones from the next in turn, then down ones."""
        with self._lock:
            start = self._next
            self._next = (self._next + 1) % len(self.clients)
            now = time.monotonic()
            turn = [(start + k) % len(self.clients) for k in range(len(self.clients))]
            up = [i for i in turn if self._down.get(i, 0.0) <= now]
            return up + [i for i in turn if i not in up]

    def failed(self, index: int) -> None:
        if len(self.clients) > 1:
            with self._lock:
                self._down[index] = time.monotonic() + DOWN_FOR_S

    def answered(self, index: int) -> None:
        with self._lock:
            self._down.pop(index, None)


def key_env(spec: ModelSpec) -> str:
    """The environment variable that holds the model's API key."""
    return spec.api_key_env or "OPENAI_API_KEY"


def key_and_url(spec: ModelSpec) -> tuple[str | None, str | None]:
    """(API key, base URL) the model is called with: the URL from the spec, else
    `OPENAI_BASE_URL`; the key from `key_env(spec)`. A local server often needs no key, so with
    a URL the key is a placeholder when none is set; it is None only with neither."""
    base_url = spec.base_url or os.environ.get("OPENAI_BASE_URL") or None
    return os.environ.get(key_env(spec)) or ("unused" if base_url else None), base_url


class OpenAICompatible(Provider):
    sees = "pixels"

    def __init__(self, spec: ModelSpec, context: GatewayContext) -> None:
        super().__init__(spec, context)
        if not spec.model:
            raise ModelConfigError(
                f"model '{spec.name}': give the model id (openai/MODEL[@BASE_URL])"
            )
        api_key, base_url = key_and_url(spec)
        if api_key is None:
            raise ModelConfigError(
                f"model '{spec.name}': set {key_env(spec)} (or give a base URL of a server that needs no key)"
            )
        self.base_url = base_url
        self.sees = spec.options.get("sees", "pixels")
        urls = [base_url, *(u for u in spec.replicas if u != base_url)]
        self.endpoints = Endpoints(
            [
                (url or "", openai.OpenAI(
                    api_key=api_key, base_url=url, max_retries=0, timeout=spec.timeout_s
                ))
                for url in urls
            ]
        )  # fmt: skip
        self.client = self.endpoints.clients[0][1]

    def cache_identity(self) -> dict[str, str]:
        return {
            "provider": "openai",
            "model": self.spec.model,
            # The masked form: a credential never enters a cache key (nor does its rotation).
            "base_url": mask_url(self.base_url or "https://api.openai.com/v1"),
        }

    def generate(
        self, parts: Sequence[Part], params: GenerateParams, mcq: MCQ | None
    ) -> Completion:
        request: dict[str, Any] = {
            "model": self.spec.model,
            "messages": chat_messages(parts, params.system),
            "temperature": params.temperature,
            "max_tokens": params.max_tokens,
            "seed": params.seed,
        }
        if params.top_p is not None:
            request["top_p"] = params.top_p
        if params.stop:
            request["stop"] = list(params.stop)
        if params.json_schema is not None:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": params.json_schema, "strict": True},
            }
        result = self._create(request)
        if not getattr(result, "choices", None):
            raise transient("empty_response", "the response has no choices")
        choice = result.choices[0]
        text = choice.message.content if choice.message is not None else None
        if text is None:
            raise transient(
                "empty_response",
                f"the first choice has no text (finish reason {choice.finish_reason})",
            )
        usage = result.usage
        return Completion(
            text=text,
            finish_reason=choice.finish_reason,
            tokens_in=usage.prompt_tokens if usage else 0,
            tokens_out=usage.completion_tokens if usage else 0,
        )

    def _create(self, request: dict[str, Any]) -> Any:
        """One chat completion: the endpoints in turn, going on to the next when one cannot be
        reached or does not answer in time (that one is left out for a while); any other
        failure is the call's, for the gateway to retry or record."""
        order = self.endpoints.order()
        for n, index in enumerate(order):
            url, client = self.endpoints.clients[index]
            try:
                result = self._create_at(client, request)
            except _Unreachable as exc:
                self.endpoints.failed(index)
                if n + 1 == len(order):
                    raise exc.error from None
                log.info("model %s: endpoint %s %s; trying the next", self.spec.name,
                         mask_url(url), exc.error.kind)  # fmt: skip
                continue
            self.endpoints.answered(index)
            return result
        raise AssertionError("unreachable: the loop returns or raises")

    def _create_at(self, client: openai.OpenAI, request: dict[str, Any]) -> Any:
        try:
            return client.chat.completions.create(**request)
        except openai.RateLimitError as exc:
            raise transient("rate_limited", f"HTTP 429: {exc.message}", _retry_after(exc)) from None
        except openai.APITimeoutError:
            raise _Unreachable(
                transient("timeout", f"no answer within {self.spec.timeout_s:g}s")
            ) from None
        except openai.APIConnectionError as exc:
            raise _Unreachable(transient("connection", str(exc) or "connection failed")) from None
        except openai.APIStatusError as exc:
            if exc.status_code >= 500 or exc.status_code in (408, 409):
                raise transient(
                    "server_error", f"HTTP {exc.status_code}: {exc.message}", _retry_after(exc)
                ) from None
            raise permanent("bad_request", f"HTTP {exc.status_code}: {exc.message}") from None
        except (openai.APIResponseValidationError, ValueError) as exc:
            raise transient("malformed_response", f"unreadable response body: {exc}") from None
