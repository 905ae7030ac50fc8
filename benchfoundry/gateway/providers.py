"""The provider interface and the one table of lazy factories.

A provider serves one model. Adding a backend is one new module with a `Provider` subclass and one
line in `PROVIDERS`; its optional dependencies are imported only when a model uses it.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING

from benchfoundry.gateway.errors import ModelConfigError, NotSupportedError, ProviderError
from benchfoundry.gateway.messages import Part, cache_form
from benchfoundry.gateway.models import ModelSpec
from benchfoundry.gateway.types import MCQ, Completion, GenerateParams, OptionScores

if TYPE_CHECKING:
    from benchfoundry.gateway.context import GatewayContext

PROVIDERS: dict[str, str] = {
    "openai": "benchfoundry.gateway.openai_compat:OpenAICompatible",
    "hf": "benchfoundry.gateway.local_hf:TransformersModel",
    "smollm2": "benchfoundry.gateway.local_smollm2:SmolLM2",
    "blind": "benchfoundry.gateway.blind:BlindBaseline",
    "facts": "benchfoundry.gateway.facts:FactReader",
}


class Provider(ABC):
    """One model behind one interface."""

    #: What the model sees of an image: "pixels", "facts" (extracted text) or "nothing".
    sees: str = "pixels"

    def __init__(self, spec: ModelSpec, context: GatewayContext) -> None:
        self.spec = spec
        self.context = context

    @abstractmethod
    def generate(
        self, parts: Sequence[Part], params: GenerateParams, mcq: MCQ | None
    ) -> Completion:
        """One attempt; raise `ProviderError` on failure."""

    def score_options(self, parts: Sequence[Part], options: Sequence[str]) -> OptionScores:
        raise NotSupportedError(
            f"model '{self.spec.name}' ({self.spec.provider}) cannot score options by likelihood; "
            "use a local transformers model (hf/..., smollm2)"
        )

    def score_options_many(
        self, items: Sequence[tuple[Sequence[Part], Sequence[str]]]
    ) -> list[OptionScores | ProviderError]:
        """`score_options` for many questions, in order, a `ProviderError` in the place of each
        that failed. Models that can score many at once faster override it."""
        results: list[OptionScores | ProviderError] = []
        for parts, options in items:
            try:
                results.append(self.score_options(parts, options))
            except ProviderError as exc:
                results.append(exc)
        return results

    def prepare(self, answers: Sequence[str]) -> None:  # noqa: B027 - optional hook
        """See the answer letters of the dataset about to be asked (only priors use it)."""

    def cache_form(self, parts: Sequence[Part]) -> list[dict[str, str]]:
        """The messages as they enter the cache key: what this model is actually shown."""
        return cache_form(parts)

    def cache_identity(self) -> dict[str, str]:
        """What identifies this model's answers in the response cache."""
        return {
            "provider": self.spec.provider,
            "model": self.spec.model,
            "base_url": self.spec.display_url or "",
        }


def create(spec: ModelSpec, context: GatewayContext) -> Provider:
    """Import the provider's module (only now) and build the provider."""
    return provider_class(spec)(spec, context)


def provider_class(spec: ModelSpec) -> type[Provider]:
    """The class that serves `spec`, its module imported now; `ModelConfigError` for an unknown
    provider or a missing package."""
    target = PROVIDERS.get(spec.provider)
    if target is None:
        raise ModelConfigError(
            f"model '{spec.name}': unknown provider '{spec.provider}'; known: {', '.join(PROVIDERS)}"
        )
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ModelConfigError(
            f"model '{spec.name}': provider '{spec.provider}' needs a package that is not installed ({exc.name})"
        ) from None
    return getattr(module, class_name)
