"""Requests and responses of the model gateway."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class GenerateParams(BaseModel):
    """Decoding parameters. `seed` keys sampled calls in the cache, so a rerun replays them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = 0.0
    max_tokens: int = 256
    top_p: float | None = None
    seed: int = 0
    stop: tuple[str, ...] = ()
    system: str | None = None
    json_schema: dict[str, Any] | None = Field(
        default=None, description="ask for structured output that follows this JSON schema"
    )
    prompt_version: str | None = Field(
        default=None, description="id and hash of the prompt template (part of the cache key)"
    )


class MCQ(BaseModel):
    """The multiple-choice question behind a prompt, for models that answer without reading
    the prompt (blind baselines). Chat models ignore it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    question: str
    options: tuple[str, ...]
    hint: str | None = None


class Completion(BaseModel):
    """What a provider returns for one successful attempt."""

    text: str
    finish_reason: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0


class Response(BaseModel):
    """A model's answer as the gateway returns it."""

    model: str
    text: str
    finish_reason: str | None
    tokens_in: int
    tokens_out: int
    latency_s: float
    cost: float
    cached: bool
    attempts: int


class OptionScores(BaseModel):
    """Log-likelihood of each option given the prompt: summed over the option's tokens, and
    divided by its token count (summed favours short options)."""

    options: list[str]
    summed: list[float]
    normalised: list[float]
    n_tokens: list[int]

    def best(self, normalised: bool = True) -> int:
        scores = self.normalised if normalised else self.summed
        return max(range(len(scores)), key=scores.__getitem__)
