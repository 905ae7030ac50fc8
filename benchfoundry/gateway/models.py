"""Model declarations: a YAML catalogue of named models, or compact spec strings.

A spec string is `PROVIDER/MODEL[@BASE_URL]` (`openai/gpt-4o-mini`,
`openai/Qwen2-VL-7B@http://127.0.0.1:8000/v1`, `hf/PATH_OR_ID`, `blind/random`,
`facts/smollm2`) or a bare provider that needs no model id (`smollm2`).
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from benchfoundry.gateway import secrets
from benchfoundry.gateway.errors import ModelConfigError


class ModelSpec(BaseModel):
    """One model: which provider serves it, where, with which defaults, prices and limits."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    provider: str
    model: str = ""
    base_url: str | None = None
    replicas: tuple[str, ...] = Field(
        default=(),
        description="more endpoints serving the same model (vLLM replicas): calls are spread "
        "over them and `base_url`, an endpoint that stops answering is left out for a while, and "
        "all share one cache (keyed by `base_url`)",
    )
    api_key_env: str | None = Field(
        default=None, description="name of the environment variable holding the API key"
    )
    roles: tuple[str, ...] = ()
    params: dict[str, Any] = Field(default_factory=dict, description="default decoding parameters")
    price_in_per_mtok: float = Field(
        default=0.0, ge=0, description="price per million input tokens"
    )
    price_out_per_mtok: float = Field(
        default=0.0, ge=0, description="price per million output tokens"
    )
    concurrency: int = Field(default=4, ge=1)
    rpm: float | None = Field(default=None, gt=0, description="requests per minute")
    tpm: float | None = Field(default=None, gt=0, description="tokens per minute")
    timeout_s: float = Field(default=120.0, gt=0)
    max_attempts: int = Field(default=5, ge=1)
    timeout_retries: int | None = Field(
        default=None,
        ge=0,
        description="times a call that got no answer within timeout_s is asked again (within "
        "max_attempts); default: up to max_attempts in a build's stages, once in an "
        "evaluation (a request a server leaves hanging mostly hangs again: each try costs its "
        "question a whole timeout)",
    )
    breaker_after: int = Field(
        default=10,
        ge=1,
        description="an evaluation stops calling the model after this many attempts in a row "
        "failed the same way (5xx, dropped connections, timeouts) with no answer between them",
    )
    max_retry_wait_s: float = Field(
        default=60.0, gt=0, description="longest Retry-After honoured; a longer one fails the call"
    )
    options: dict[str, Any] = Field(default_factory=dict, description="provider-specific settings")
    frames: int = Field(
        default=8,
        ge=1,
        le=64,
        description="a clip question's frames shown to this model as images, sampled uniformly "
        "from the stretch asked about (SEED-Bench gives image models 8)",
    )
    video: bool = Field(
        default=False,
        description="show clip questions the clip itself: a `video_url` part to an "
        "OpenAI-compatible server (vLLM, SGLang); instead of `frames`",
    )

    @field_validator("params")
    @classmethod
    def _params_are_decoding_parameters(cls, value: dict[str, Any]) -> dict[str, Any]:
        from benchfoundry.gateway.types import GenerateParams

        GenerateParams(**value)  # unknown keys or wrong types fail here, not at call time
        return value

    @field_validator("base_url")
    @classmethod
    def _base_url_is_http(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("base_url must be an http(s) URL")
        return value

    @field_validator("replicas")
    @classmethod
    def _replicas_are_http(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for url in value:
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"replica {mask_url(url)} is not an http(s) URL")
        return value

    @property
    def display_url(self) -> str | None:
        """The endpoint with any credentials in it masked, for messages and listings."""
        return mask_url(self.base_url) if self.base_url else None

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.price_in_per_mtok + tokens_out * self.price_out_per_mtok) / 1e6


# Query parameters that carry credentials (`?api-key=...`, `?token=...`); others, such as
# `?api-version=2024-06-01`, are part of which endpoint is meant and stay as they are.
_SECRET_PARAM = re.compile(r"key|token|secret|passw|pwd|sig|auth|code|credential", re.I)


def mask_url(url: str) -> str:
    """`url` with user:password and the values of credential-like query parameters replaced by
    ***."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rsplit("@", 1)[1]
    query = "&".join(
        f"{kv.split('=', 1)[0]}=***" if "=" in kv and _SECRET_PARAM.search(kv.split("=")[0]) else kv
        for kv in parts.query.split("&")
    )
    return urlunsplit(
        (parts.scheme, netloc, parts.path, query if parts.query else "", parts.fragment)
    )


def _split_at_url(text: str) -> tuple[str, str]:
    """(head, url) of a spec string `HEAD@URL`; url is "" when there is none. Any scheme, any
    case, so that a wrong one is still masked in the error that refuses it."""
    found = re.search(r"@(?=[A-Za-z][A-Za-z0-9+.-]*://)", text)
    return (text[: found.start()], text[found.end() :]) if found else (text, "")


def mask_spec_string(text: str) -> str:
    """A spec string with the credentials of any URL in it masked: it is also the model's name."""
    head, url = _split_at_url(text)
    return f"{head}@{mask_url(url)}" if url else text


# Spec strings with endpoint credentials seen in this process: masked form -> the real string.
# A model's name everywhere (tables, reports, logs, artifacts, cache keys, flow parameters) is the
# masked form; the real one is looked up here when a provider is built, so the credential is used
# on the wire only.
_REAL_SPECS: dict[str, str] = {}
_REAL_LOCK = threading.Lock()
MASK = "***"


def protect(text: str) -> str:
    """The masked form of a model spec string (or name), remembering the real one for the wire.
    Idempotent: a masked string comes back unchanged."""
    text = text.strip()
    masked = mask_spec_string(text)
    if masked == text:
        return text
    with _REAL_LOCK:
        known = _REAL_SPECS.setdefault(masked, text)
    if known != text:
        raise ModelConfigError(
            f"two models are both '{masked}' once their credentials are masked; give them "
            "names in a model catalogue (with api_key_env) instead"
        )
    secrets.remember(*_credentials(text))
    return masked


def remembered() -> list[str]:
    """The real spec strings this process has read (to hand to worker processes it starts)."""
    with _REAL_LOCK:
        return list(_REAL_SPECS.values())


def remember_all(texts: list[str]) -> int:
    """In a worker process: remember real spec strings handed over by the process that read
    them, so their masked names resolve here too."""
    for text in texts:
        protect(text)
    return len(texts)


def _credentials(text: str) -> list[str]:
    """The secret parts of a spec string's URL: user:password, the password, credential-like
    query values."""
    _, url = _split_at_url(text)
    if not url:
        return []
    parts = urlsplit(url)
    found = []
    if "@" in parts.netloc:
        userinfo = parts.netloc.rsplit("@", 1)[0]
        found += [userinfo, userinfo.partition(":")[2]]
    found += [
        kv.split("=", 1)[1]
        for kv in parts.query.split("&")
        if "=" in kv and _SECRET_PARAM.search(kv.split("=")[0])
    ]
    return [f for f in found if f and f != MASK]


def protect_models(models: dict[str, list[str]]) -> dict[str, list[str]]:
    """Every model of a role table in its masked form."""
    return {role: [protect(name) for name in names] for role, names in models.items()}


def _unmask(text: str) -> str:
    """The real spec string behind a masked one (itself when it holds no masked credentials)."""
    if mask_spec_string(text) != text or MASK not in _split_at_url(text)[1]:
        return text
    with _REAL_LOCK:
        real = _REAL_SPECS.get(text)
    if real is None:
        raise ModelConfigError(
            f"model '{text}': its endpoint credentials are masked and the real ones were not "
            "given to this process; name the model in a model catalogue with api_key_env, or "
            "pass the full spec string again"
        )
    return real


# Providers that need no model id, and the defaults a bare name stands for.
BARE = {"smollm2": "smollm2"}
# Providers whose model is another model's spec string.
WRAPPERS = ("facts",)


def parse_model(text: str) -> ModelSpec:
    """A spec from a compact string; its name is the string itself."""
    text = text.strip()
    if not text:
        raise ModelConfigError("empty model spec")
    if text in BARE:
        return ModelSpec(name=text, provider=BARE[text])
    name = protect(text)
    text = _unmask(text)
    provider, sep, rest = text.partition("/")
    if not sep or not rest:
        raise ModelConfigError(
            f"model spec '{mask_spec_string(text)}' is not PROVIDER/MODEL[@BASE_URL] (e.g. openai/gpt-4o-mini, "
            "hf/PATH_OR_ID, blind/random, facts/smollm2) nor one of: " + ", ".join(BARE)
        )
    if provider in WRAPPERS:  # the rest is a whole spec of its own: facts/openai/x@http://...
        inner = parse_model(rest)
        return ModelSpec(name=name, provider=provider, model=inner.name)
    model, at, base_url = rest.partition("@")
    if at and not base_url.startswith(("http://", "https://")):
        raise ModelConfigError(f"model spec '{name}': the part after '@' must be an http(s) URL")
    return ModelSpec(name=name, provider=provider, model=model, base_url=base_url or None)


def load_catalogue(path: str | Path) -> dict[str, ModelSpec]:
    """Named models from a YAML file: `models: [{name: ..., provider: ..., ...}]`."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ModelConfigError(f"cannot read model catalogue {path}: {exc}") from None
    if not isinstance(raw, dict) or set(raw) - {"models"}:
        raise ModelConfigError(f"model catalogue {path} must hold one key, 'models', with a list")
    specs: dict[str, ModelSpec] = {}
    for i, entry in enumerate(raw.get("models") or []):
        try:
            spec = ModelSpec.model_validate(entry)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()
            )
            raise ModelConfigError(f"model catalogue {path}, entry {i}: {problems}") from None
        if spec.name in specs:
            raise ModelConfigError(f"model catalogue {path}: the name '{spec.name}' is used twice")
        specs[spec.name] = spec
    return specs


def resolve(
    name_or_spec: str | ModelSpec, catalogue: dict[str, ModelSpec] | None = None
) -> ModelSpec:
    """A catalogue entry by name, else a parsed spec string."""
    if isinstance(name_or_spec, ModelSpec):
        return name_or_spec
    if catalogue and name_or_spec in catalogue:
        return catalogue[name_or_spec]
    if catalogue and "/" not in name_or_spec and name_or_spec.strip() not in BARE:
        raise ModelConfigError(unknown_name(name_or_spec, catalogue))
    return parse_model(name_or_spec)


def unknown_name(name: str, catalogue: dict[str, ModelSpec]) -> str:
    """Why a bare name is no model: the close names of the catalogue, every name it has, and
    where to read what each is."""
    import difflib

    names = sorted({*catalogue, *BARE})
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    guess = f"; did you mean {' or '.join(close)}?" if close else ""
    return (
        f"'{protect(name)}' is no model of the catalogue{guess} Its models: {', '.join(names)} "
        "(`benchfoundry models` says what each is); or give a spec string "
        "PROVIDER/MODEL[@BASE_URL] (openai/gpt-4o-mini, hf/PATH_OR_ID, blind/random)"
    )
