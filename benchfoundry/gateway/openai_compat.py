"""Chat models behind any OpenAI-compatible HTTP server (OpenAI, vLLM, Ollama, the test server),
through the official `openai` client. Retries are the gateway's, so the client makes one try."""

from __future__ import annotations

import email.utils
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import openai

from benchfoundry.gateway.context import GatewayContext
from benchfoundry.gateway.errors import ModelConfigError, permanent, transient
from benchfoundry.gateway.messages import ImagePart, Part, TextPart, has_images
from benchfoundry.gateway.models import ModelSpec, mask_url
from benchfoundry.gateway.providers import Provider
from benchfoundry.gateway.types import MCQ, Completion, GenerateParams


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
            else {"type": "image_url", "image_url": {"url": p.data_url()}}
            for p in parts
            if isinstance(p, TextPart | ImagePart)
        ]
    else:
        content = "\n".join(p.value for p in parts if isinstance(p, TextPart))
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    return messages + [{"role": "user", "content": content}]


class OpenAICompatible(Provider):
    sees = "pixels"

    def __init__(self, spec: ModelSpec, context: GatewayContext) -> None:
        super().__init__(spec, context)
        if not spec.model:
            raise ModelConfigError(
                f"model '{spec.name}': give the model id (openai/MODEL[@BASE_URL])"
            )
        key_env = spec.api_key_env or "OPENAI_API_KEY"
        base_url = spec.base_url or os.environ.get("OPENAI_BASE_URL") or None
        # Local servers often need no key; the client still wants a non-empty one.
        api_key = os.environ.get(key_env) or ("unused" if base_url else None)
        if api_key is None:
            raise ModelConfigError(
                f"model '{spec.name}': set {key_env} (or give a base URL of a server that needs no key)"
            )
        self.base_url = base_url
        self.sees = spec.options.get("sees", "pixels")
        self.client = openai.OpenAI(
            api_key=api_key, base_url=base_url, max_retries=0, timeout=spec.timeout_s
        )

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
        try:
            result = self.client.chat.completions.create(**request)
        except openai.RateLimitError as exc:
            raise transient("rate_limited", f"HTTP 429: {exc.message}", _retry_after(exc)) from None
        except openai.APITimeoutError:
            raise transient("timeout", f"no answer within {self.spec.timeout_s:g}s") from None
        except openai.APIConnectionError as exc:
            raise transient("connection", str(exc) or "connection failed") from None
        except openai.APIStatusError as exc:
            if exc.status_code >= 500 or exc.status_code in (408, 409):
                raise transient(
                    "server_error", f"HTTP {exc.status_code}: {exc.message}", _retry_after(exc)
                ) from None
            raise permanent("bad_request", f"HTTP {exc.status_code}: {exc.message}") from None
        except (openai.APIResponseValidationError, ValueError) as exc:
            raise transient("malformed_response", f"unreadable response body: {exc}") from None
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
