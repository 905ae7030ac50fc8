"""Typed failures of model calls. Failure is an exception or a value, never a magic string."""

from __future__ import annotations

from benchfoundry.core.errors import UserError


class ProviderError(Exception):
    """Raised by a provider for one attempt. `transient` failures are retried by the gateway."""

    def __init__(
        self, kind: str, message: str, *, transient: bool, retry_after: float | None = None
    ) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.transient = transient
        self.retry_after = retry_after


def transient(kind: str, message: str, retry_after: float | None = None) -> ProviderError:
    """A failure worth retrying: rate limit, server error, timeout, dropped connection."""
    return ProviderError(kind, message, transient=True, retry_after=retry_after)


def permanent(kind: str, message: str) -> ProviderError:
    """A failure that another attempt would repeat: a bad request, an unsupported input."""
    return ProviderError(kind, message, transient=False)


class ModelCallError(Exception):
    """A model call that failed for good, after `attempts` tries. Callers record it."""

    def __init__(self, model: str, kind: str, message: str, attempts: int) -> None:
        super().__init__(f"model '{model}' failed after {attempts} attempt(s): {kind}: {message}")
        self.model = model
        self.kind = kind
        self.message = message
        self.attempts = attempts


class ModelConfigError(UserError, ValueError):
    """A model spec that cannot be resolved (unknown provider, missing package, bad string)."""


class NotSupportedError(Exception):
    """A capability the model's backend does not have (e.g. option scoring over HTTP)."""
