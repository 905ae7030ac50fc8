"""The model gateway: every model call of every stage goes through here.

It resolves models (catalogue names or spec strings) to providers built lazily, replays answers
from the content-addressed cache, paces calls per model, retries transient failures with backoff
and jitter, turns final failures into `ModelCallError`, and counts tokens and cost.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from benchfoundry.gateway import providers
from benchfoundry.gateway.cache import ResponseCache, cache_key
from benchfoundry.gateway.context import GatewayContext
from benchfoundry.gateway.errors import ModelCallError, ProviderError
from benchfoundry.gateway.limits import ModelLimiter, backoff
from benchfoundry.gateway.messages import Part, cache_form, normalise, text_of
from benchfoundry.gateway.models import ModelSpec, resolve
from benchfoundry.gateway.secrets import redact
from benchfoundry.gateway.types import MCQ, GenerateParams, OptionScores, Response
from benchfoundry.gateway.usage import Usage, UsageLedger

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Request:
    """One call for `Gateway.generate_many`."""

    model: str | ModelSpec
    messages: Any
    params: GenerateParams | None = None
    mcq: MCQ | None = None


class Gateway:
    """One entry point for chat models, local models and blind baselines."""

    def __init__(
        self,
        catalogue: dict[str, ModelSpec] | None = None,
        cache: ResponseCache | None = None,
        context: GatewayContext | None = None,
        ledger: UsageLedger | None = None,
        stage: str = "",
        sleep: Any = time.sleep,
    ) -> None:
        self.catalogue = dict(catalogue or {})
        self.cache = cache
        self.context = context or GatewayContext()
        self.ledger = ledger or UsageLedger()
        self.stage = stage
        self._sleep = sleep
        self._providers: dict[str, providers.Provider] = {}
        self._limiters: dict[str, ModelLimiter] = {}
        self._lock = threading.Lock()

    # --- models -------------------------------------------------------------------------------

    def spec(self, model: str | ModelSpec) -> ModelSpec:
        return resolve(model, self.catalogue)

    def provider(self, model: str | ModelSpec) -> providers.Provider:
        spec = self.spec(model)
        with self._lock:
            if spec.name not in self._providers:
                self._providers[spec.name] = providers.create(spec, self.context)
                self._limiters[spec.name] = ModelLimiter(spec.concurrency, spec.rpm, spec.tpm)
            return self._providers[spec.name]

    def limiter(self, model: str | ModelSpec) -> ModelLimiter:
        self.provider(model)
        return self._limiters[self.spec(model).name]

    def sees(self, model: str | ModelSpec) -> str:
        """What the model sees of an image: pixels, facts (extracted text) or nothing."""
        return self.provider(model).sees

    def prepare(self, model: str | ModelSpec, answers: Sequence[str]) -> None:
        self.provider(model).prepare(answers)

    # --- calls --------------------------------------------------------------------------------

    def _key(
        self,
        provider: providers.Provider,
        parts: list[Part],
        params: GenerateParams,
        mcq: MCQ | None,
    ) -> str:
        material = {
            **provider.cache_identity(),
            "params": params.model_dump(mode="json"),
            "messages": cache_form(parts),
            "mcq": mcq.model_dump(mode="json") if mcq else None,
        }
        return cache_key(material)

    def generate(
        self,
        model: str | ModelSpec,
        messages: Any,
        params: GenerateParams | None = None,
        mcq: MCQ | None = None,
    ) -> Response:
        """Ask `model`; replay from the cache when the same call was made before. Raises
        `ModelCallError` when every attempt failed."""
        spec = self.spec(model)
        provider = self.provider(spec)
        params = params or GenerateParams(**spec.params)
        parts = normalise(messages, self.context.images)
        key = self._key(provider, parts, params, mcq)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            self.ledger.record(
                self.stage,
                spec.name,
                Usage(calls=1, cached=1, tokens_in=hit.tokens_in, tokens_out=hit.tokens_out),
            )
            return hit.model_copy(update={"cached": True, "cost": 0.0, "latency_s": 0.0})
        response = self._call(spec, provider, parts, params, mcq)
        if self.cache is not None:
            self.cache.put(key, response)
        return response

    def _call(
        self,
        spec: ModelSpec,
        provider: providers.Provider,
        parts: list[Part],
        params: GenerateParams,
        mcq: MCQ | None,
    ) -> Response:
        limiter = self._limiters[spec.name]
        estimate = len(text_of(parts)) // 4 + params.max_tokens
        errors: dict[str, int] = {}
        started = time.monotonic()
        for attempt in range(spec.max_attempts):
            try:
                with limiter.slot(estimate):
                    completion = provider.generate(parts, params, mcq)
            except ProviderError as exc:
                errors[exc.kind] = errors.get(exc.kind, 0) + 1
                message = redact(exc.message, (spec.api_key_env,) if spec.api_key_env else ())
                last_try = attempt + 1 == spec.max_attempts
                if not exc.transient or last_try:
                    self.ledger.record(
                        self.stage, spec.name, Usage(calls=1, attempts=attempt + 1, errors=errors)
                    )
                    raise ModelCallError(spec.name, exc.kind, message, attempt + 1) from None
                if exc.retry_after:
                    limiter.pause(exc.retry_after)
                delay = backoff(attempt, retry_after=exc.retry_after)
                log.info(
                    "model %s: %s (attempt %d), retrying in %.2fs",
                    spec.name,
                    exc.kind,
                    attempt + 1,
                    delay,
                )
                self._sleep(delay)
                continue
            latency = time.monotonic() - started
            cost = spec.cost(completion.tokens_in, completion.tokens_out)
            self.ledger.record(
                self.stage,
                spec.name,
                Usage(
                    calls=1,
                    tokens_in=completion.tokens_in,
                    tokens_out=completion.tokens_out,
                    cost=cost,
                    latency_s=latency,
                    attempts=attempt + 1,
                    errors=errors,
                ),
            )
            return Response(
                model=spec.name,
                text=completion.text,
                finish_reason=completion.finish_reason,
                tokens_in=completion.tokens_in,
                tokens_out=completion.tokens_out,
                latency_s=latency,
                cost=cost,
                cached=False,
                attempts=attempt + 1,
            )
        raise AssertionError("unreachable: the loop returns or raises")

    def generate_many(
        self, requests: Sequence[Request], workers: int = 16
    ) -> list[Response | ModelCallError]:
        """Run many calls in parallel (each model's own limits still hold); results in order,
        a `ModelCallError` in the place of each call that failed."""

        def one(request: Request) -> Response | ModelCallError:
            try:
                return self.generate(request.model, request.messages, request.params, request.mcq)
            except ModelCallError as exc:
                return exc

        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            return list(pool.map(one, requests))

    def score_options(
        self, model: str | ModelSpec, messages: Any, options: Sequence[str]
    ) -> OptionScores:
        """Log-likelihood of each option (local models only; others raise NotSupportedError)."""
        provider = self.provider(model)
        return provider.score_options(normalise(messages, self.context.images), list(options))
