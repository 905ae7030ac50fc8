"""The model gateway: every model call of every stage goes through here.

It resolves models (catalogue names or spec strings) to providers built lazily, replays answers
from the content-addressed cache, paces calls per model, retries transient failures with backoff
and jitter, turns final failures into `ModelCallError`, and counts tokens and cost.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from benchfoundry.core import interrupt
from benchfoundry.core.clock import SYSTEM, Clock
from benchfoundry.gateway import providers
from benchfoundry.gateway.breaker import OPEN_KIND, Breaker
from benchfoundry.gateway.cache import ResponseCache, cache_key, ended_alone, uncapped_key
from benchfoundry.gateway.context import GatewayContext
from benchfoundry.gateway.errors import ModelCallError, ProviderError
from benchfoundry.gateway.limits import ModelLimiter, backoff
from benchfoundry.gateway.messages import Part, clip_input, normalise, text_of
from benchfoundry.gateway.models import ModelSpec, resolve
from benchfoundry.gateway.secrets import redact
from benchfoundry.gateway.types import MCQ, Completion, GenerateParams, OptionScores, Response
from benchfoundry.gateway.usage import Usage, UsageLedger

log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")


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
        clock: Clock = SYSTEM,
    ) -> None:
        self.catalogue = dict(catalogue or {})
        self.cache = cache
        self.context = context or GatewayContext()
        self.ledger = ledger or UsageLedger()
        self.stage = stage
        self.clock = clock  # pacing, Retry-After pauses and backoff wait on it
        self._providers: dict[str, providers.Provider] = {}
        self._limiters: dict[str, ModelLimiter] = {}
        self._breakers: dict[str, Breaker] = {}
        # Whether a model whose server fails every attempt is cut short (`breaker.py`): an
        # evaluation turns it on; a build's stages retry each call to its end.
        self.breakers_on = False
        # How often a call that timed out is asked again when its model does not say
        # (`timeout_retries`): None, up to `max_attempts`; an evaluation asks it once more.
        self.timeout_retries: int | None = None
        self._lock = threading.Lock()

    # --- models -------------------------------------------------------------------------------

    def spec(self, model: str | ModelSpec) -> ModelSpec:
        return resolve(model, self.catalogue)

    @staticmethod
    def _identity(spec: ModelSpec) -> str:
        return spec.model_dump_json()

    def provider(self, model: str | ModelSpec) -> providers.Provider:
        """The model's provider, built on first use (two specs that differ get two providers)."""
        spec = self.spec(model)
        identity = self._identity(spec)
        with self._lock:
            if identity not in self._providers:
                self._providers[identity] = providers.create(spec, self.context)
                self._limiters[identity] = ModelLimiter(
                    spec.concurrency, spec.rpm, spec.tpm, self.clock
                )
                self._breakers[identity] = Breaker(spec.breaker_after)
            return self._providers[identity]

    def limiter(self, model: str | ModelSpec) -> ModelLimiter:
        self.provider(model)
        return self._limiters[self._identity(self.spec(model))]

    def breaker(self, model: str | ModelSpec) -> Breaker:
        """The model's circuit breaker (it acts only with `breakers_on`)."""
        self.provider(model)
        return self._breakers[self._identity(self.spec(model))]

    def sees(self, model: str | ModelSpec) -> str:
        """What the model sees of an image: pixels, facts (extracted text) or nothing."""
        return self.provider(model).sees

    def prepare(self, model: str | ModelSpec, answers: Sequence[str]) -> None:
        self.provider(model).prepare(answers)

    # --- calls --------------------------------------------------------------------------------

    @staticmethod
    def params_for(spec: ModelSpec, params: GenerateParams | None) -> GenerateParams:
        """The catalogue's defaults for the model, overridden by what the caller set."""
        base = GenerateParams(**spec.params)
        if params is None:
            return base
        return base.model_copy(update={k: getattr(params, k) for k in params.model_fields_set})

    def _prepare_call(
        self, spec: ModelSpec, messages: Any, what: dict[str, Any]
    ) -> tuple[providers.Provider, list[Part], dict[str, Any]]:
        """Provider, normalised parts and what keys the call in the cache; bad input fails as a
        `ModelCallError`."""
        provider = self.provider(spec)
        try:
            parts = clip_input(
                normalise(messages, self.context.images), provider.sees, spec.frames, spec.video
            )
            material = {**provider.cache_identity(), "messages": provider.cache_form(parts), **what}
        except (ValueError, KeyError, OSError) as exc:
            self.ledger.record(self.stage, spec.name, Usage(calls=1, errors={"bad_input": 1}))
            raise ModelCallError(spec.name, "bad_input", str(exc), 0) from None
        except ProviderError as exc:
            self.ledger.record(self.stage, spec.name, Usage(calls=1, errors={exc.kind: 1}))
            raise ModelCallError(spec.name, exc.kind, exc.message, 0) from None
        return provider, parts, material

    def generate(
        self,
        model: str | ModelSpec,
        messages: Any,
        params: GenerateParams | None = None,
        mcq: MCQ | None = None,
    ) -> Response:
        """Ask `model`; replay from the cache when the same call was made before. Raises
        `ModelCallError` when the input is bad or every attempt failed."""
        spec = self.spec(model)
        params = self.params_for(spec, params)
        what = {
            "params": params.model_dump(mode="json"),
            "mcq": mcq.model_dump(mode="json") if mcq else None,
        }
        provider, parts, material = self._prepare_call(spec, messages, what)
        key, uncapped = cache_key(material), uncapped_key(material, params)
        if (hit := self._replay(key, uncapped, params.max_tokens)) is not None:
            # A replay costs nothing and processes no tokens: usage counts what models did.
            self.ledger.record(self.stage, spec.name, Usage(calls=1, cached=1))
            return hit.model_copy(
                update={"model": spec.name, "cached": True, "cost": 0.0, "latency_s": 0.0}
            )
        estimate = len(text_of(parts)) // 4 + params.max_tokens

        def keep(completion: Completion, attempts: int, latency: float, errors: dict) -> Response:
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
                    attempts=attempts,
                    errors=errors,
                ),
            )
            response = Response(
                model=spec.name,
                text=completion.text,
                finish_reason=completion.finish_reason,
                tokens_in=completion.tokens_in,
                tokens_out=completion.tokens_out,
                latency_s=latency,
                cost=cost,
                cached=False,
                attempts=attempts,
            )
            if self.cache is not None:
                self.cache.put(key, response)
                if uncapped is not None and ended_alone(response, params.max_tokens):
                    self.cache.put(uncapped, response)
            return response

        return self._attempts(spec, lambda: provider.generate(parts, params, mcq), estimate, keep)

    def _replay(self, key: str, uncapped: str | None, max_tokens: int) -> Response | None:
        """The cached answer to this very call; else, for a greedy call, an answer to the same
        call under another `max_tokens` that ended on its own within this one's (greedy
        decoding writes the same tokens whatever the cap, so it is this call's answer too:
        quality control asks for 16 tokens, an evaluation for 64)."""
        if self.cache is None:
            return None
        if (hit := self.cache.get(key)) is not None:
            return hit
        if uncapped is not None and (hit := self.cache.get(uncapped)) is not None:
            return hit if ended_alone(hit, max_tokens) else None
        return None

    def _attempts(
        self,
        spec: ModelSpec,
        attempt_once: Callable[[], T],
        estimate: int,
        keep: Callable[[T, int, float, dict[str, int]], R],
    ) -> R:
        """Run `attempt_once` under the model's limits, retrying transient failures with backoff
        and jitter; then `keep(result, attempts, latency, errors)` (journal and cache), still
        holding the model's slot, so that a process killed at any moment has at most the
        model's concurrency of answered calls it did not keep. Raises `ModelCallError`."""
        limiter = self.limiter(spec)
        breaker = self.breaker(spec) if self.breakers_on else None
        errors: dict[str, int] = {}
        started = time.monotonic()
        for attempt in range(spec.max_attempts):
            if interrupt.requested():  # Ctrl-C: no new call
                raise ModelCallError(spec.name, interrupt.REASON, "stopped by Ctrl-C", attempt)
            if breaker is not None and breaker.why is not None:  # the server fails every call
                self.ledger.record(
                    self.stage, spec.name, Usage(calls=1, attempts=attempt, errors=errors)
                )
                raise ModelCallError(spec.name, OPEN_KIND, breaker.why, attempt)
            try:
                with limiter.slot(estimate):
                    result = attempt_once()
                    kept = keep(result, attempt + 1, time.monotonic() - started, errors)
            except ProviderError as exc:
                errors[exc.kind] = errors.get(exc.kind, 0) + 1
                if breaker is not None:
                    breaker.failed(exc.kind, exc.message)
                if exc.kind == "rate_limited":
                    limiter.throttled()
                message = redact(exc.message, (spec.api_key_env,) if spec.api_key_env else ())
                too_long = exc.retry_after is not None and exc.retry_after > spec.max_retry_wait_s
                if too_long:
                    message += f" (the server asks to wait {exc.retry_after:g}s, more than max_retry_wait_s={spec.max_retry_wait_s:g})"
                # A call left hanging is asked again `timeout_retries` times, not to the end.
                allowed = (
                    spec.timeout_retries
                    if spec.timeout_retries is not None
                    else self.timeout_retries
                )
                hung = exc.kind == "timeout" and allowed is not None and errors["timeout"] > allowed
                if not exc.transient or too_long or hung or attempt + 1 == spec.max_attempts:
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
                self.clock.sleep(delay)
                continue
            if breaker is not None:
                breaker.answered()
            limiter.succeeded()
            return kept
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
        """Log-likelihood of each option (local models only; others raise NotSupportedError).
        Cached and counted like `generate`; failures raise `ModelCallError`."""
        spec = self.spec(model)
        provider, parts, material = self._prepare_call(
            spec, messages, {"score_options": list(options)}
        )
        key = cache_key(material)
        if (hit := self._cached_scores(spec, key)) is not None:
            return hit

        def keep(scores: OptionScores, attempts: int, latency: float, errors: dict) -> OptionScores:
            return self._keep_scores(spec, key, scores, attempts, latency, errors)

        return self._attempts(spec, lambda: provider.score_options(parts, list(options)), 0, keep)

    def score_options_many(
        self, model: str | ModelSpec, requests: Sequence[tuple[Any, Sequence[str]]]
    ) -> list[OptionScores | ModelCallError]:
        """`score_options` for many questions (messages, options): cached ones replayed, the
        others asked of the model together, which a local model scores in a few passes.
        Results in order, a `ModelCallError` in the place of each question that failed. The
        answers of an attempt are kept as they come; a failure worth retrying asks again only
        the questions that had it."""
        spec = self.spec(model)
        results: list[OptionScores | ModelCallError | None] = [None] * len(requests)
        pending: list[tuple[int, list[Part], str]] = []  # not answered yet
        provider = self.provider(spec)
        for i, (messages, options) in enumerate(requests):
            try:
                _, parts, material = self._prepare_call(
                    spec, messages, {"score_options": list(options)}
                )
            except ModelCallError as exc:
                results[i] = exc
                continue
            key = cache_key(material)
            if (hit := self._cached_scores(spec, key)) is not None:
                results[i] = hit
            else:
                pending.append((i, parts, key))

        def ask() -> list[OptionScores | ProviderError]:
            return provider.score_options_many([(p, list(requests[i][1])) for i, p, _ in pending])

        def keep(answers: list, attempts: int, latency: float, errors: dict) -> None:
            if len(answers) != len(pending):
                raise AssertionError(f"{len(pending)} questions scored as {len(answers)}")
            share = latency / max(1, len(pending))  # the call's time, shared by its questions
            retry, again = None, []
            for (i, parts, key), answer in zip(pending, answers, strict=True):
                if isinstance(answer, ProviderError) and answer.transient:
                    retry = retry or answer
                    again.append((i, parts, key))
                elif isinstance(answer, ProviderError):
                    self.ledger.record(
                        self.stage,
                        spec.name,
                        Usage(calls=1, attempts=attempts, errors={answer.kind: 1}),
                    )
                    results[i] = ModelCallError(spec.name, answer.kind, answer.message, attempts)
                else:
                    results[i] = self._keep_scores(spec, key, answer, attempts, share, errors)
            pending[:] = again
            if retry is not None:
                raise retry

        if pending:
            try:
                self._attempts(spec, ask, 0, keep)
            except ModelCallError as exc:  # every attempt failed for these questions
                for i, _, _ in pending:
                    results[i] = exc
        return results  # type: ignore[return-value]

    def _cached_scores(self, spec: ModelSpec, key: str) -> OptionScores | None:
        if self.cache is None or (hit := self.cache.get(key)) is None:
            return None
        self.ledger.record(self.stage, spec.name, Usage(calls=1, cached=1))
        return OptionScores.model_validate_json(hit.text)

    def _keep_scores(
        self,
        spec: ModelSpec,
        key: str,
        scores: OptionScores,
        attempts: int,
        latency: float,
        errors: dict,
    ) -> OptionScores:
        """Count a scoring call and cache its scores."""
        self.ledger.record(
            self.stage,
            spec.name,
            Usage(calls=1, latency_s=latency, attempts=attempts, errors=errors),
        )
        if self.cache is not None:
            self.cache.put(
                key,
                Response(
                    model=spec.name,
                    text=scores.model_dump_json(),
                    finish_reason="scores",
                    tokens_in=0,
                    tokens_out=0,
                    latency_s=latency,
                    cost=0.0,
                    cached=False,
                    attempts=attempts,
                ),
            )
        return scores
