"""The preflight: every model a build spec names, and every source ingest would read, is checked
in seconds, before any stage runs (a missing folder fails here, not after the server started).

A spec naming `openai/gpt-4o-mini` with no API key used to run ingest and extract and fail only
at generate; the preflight says so at once. Each model is checked the way the gateway will use
it: its provider is known and importable, an endpoint has a key or a base URL that needs none, a
local model's weights are on disk. With `reach`, each endpoint model is also asked one tiny
question. Models are named by their masked form: no credential reaches a message.
"""

from __future__ import annotations

import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from benchfoundry.core.errors import UserError
from benchfoundry.gateway.errors import ModelCallError, ModelConfigError
from benchfoundry.gateway.models import ModelSpec, parse_model, protect, resolve
from benchfoundry.gateway.secrets import redact
from benchfoundry.pipeline.registry import StageRun, group
from benchfoundry.sources.models import describe_source, source_problem

if TYPE_CHECKING:
    from benchfoundry.gateway import Gateway

SOURCE = "source"  # the `provider` of a source's check: sources are checked beside the models
REACH_TIMEOUT_S = 15.0  # the longest a reach call waits for its one answer
_TRUE = {"1", "on", "yes", "true"}


class ModelCheck(BaseModel):
    """One model's preflight: where the spec names it and what, if anything, is wrong."""

    name: str = Field(description="the model as the spec names it, credentials masked")
    where: list[str] = Field(description="where it is named: models.ROLE, options.STAGE.FIELD")
    provider: str | None = None
    ok: bool = True
    problem: str | None = None
    latency_s: float | None = Field(default=None, description="the reach call's latency")

    def line(self) -> str:
        return f"{self.name} ({', '.join(self.where)}): {self.problem}"


class PreflightReport(BaseModel):
    """Every model a build would use, checked."""

    results: list[ModelCheck] = Field(default_factory=list)
    reached: bool = False

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    @property
    def problems(self) -> list[ModelCheck]:
        return [r for r in self.results if not r.ok]

    def text(self) -> str:
        """One line per problem; with none, one line that says what was checked."""
        if self.problems:
            return "\n".join(r.line() for r in self.problems)
        reached = [r for r in self.results if r.latency_s is not None]
        how = f", {len(reached)} reached" if reached else ""
        sources = sum(r.provider == SOURCE for r in self.results)
        models = len(self.results) - sources
        read = f", {sources} source(s) readable" if sources else ""
        return f"preflight: {models} model(s) ok{how}{read}"


class PreflightError(UserError):
    """A model of the build cannot be used as configured; the message names each one."""


class Probe(BaseModel):
    """One cheap call to a model: its reply or its error, and how long it took."""

    ok: bool
    seconds: float
    reply: str | None = None
    error: str | None = None


def probe(gateway: Gateway, model: str | ModelSpec) -> Probe:
    """Ask `model` one tiny question through `gateway` (a blind baseline gets a tiny
    multiple-choice one); every failure, whatever its kind, is reported, not raised."""
    from benchfoundry.gateway import MCQ, GenerateParams

    started = time.monotonic()
    try:
        if gateway.spec(model).provider == "blind":
            gateway.prepare(model, ["A", "B", "A"])
            question = "Which is a colour?"
            mcq = MCQ(question=question, options=("blue", "seven"))
            response = gateway.generate(model, question, mcq=mcq)
        else:
            response = gateway.generate(
                model, "Reply with the word OK.", GenerateParams(max_tokens=5)
            )
    except ModelCallError as exc:
        error = f"{exc.kind}: {exc.message}"
    except Exception as exc:  # a check reports every failure, whatever its kind
        error = str(exc)
    else:
        return Probe(
            ok=True, seconds=round(time.monotonic() - started, 3), reply=response.text[:40]
        )
    return Probe(ok=False, seconds=round(time.monotonic() - started, 3), error=redact(error))


def stages_of(names: list[str]) -> list[str]:
    """Stage names with each group command (`qc`) as the stages it runs."""
    return [s for name in names for s in ([g.name for g in group(name)] or [name])]


def _sections(stage: StageRun, stages: list[str] | None) -> list[tuple[str, object]]:
    names = stages_of(stage.stages if stages is None else stages)
    return [(n, getattr(stage.options, n)) for n in names if hasattr(stage.options, n)]


def named_models(stage: StageRun, stages: list[str] | None = None) -> dict[str, list[str]]:
    """Masked model name -> where it is named, for the stages that will run: each stage's
    options say which models it will call (`named_models`), so no stage is known here."""
    found: dict[str, list[str]] = {}
    for _name, options in _sections(stage, stages):
        for where, names in options.named_models(stage.models).items():
            for name in names:
                places = found.setdefault(protect(name), [])
                if where not in places:
                    places.append(where)
    return found


def named_weights(stage: StageRun, stages: list[str] | None = None) -> dict[str, list[str]]:
    """Local weights (a path or a hub id) -> where they are named, for the stages that run."""
    found: dict[str, list[str]] = {}
    for _name, options in _sections(stage, stages):
        for where, value in options.named_weights().items():
            found.setdefault(value, []).append(where)
    return found


def _short(exc: Exception, spec: ModelSpec | None = None) -> str:
    """An error's message without the `model 'NAME': ` the gateway starts it with."""
    text = str(exc)
    if spec is not None and text.startswith(prefix := f"model '{spec.name}': "):
        text = text[len(prefix) :]
    return text


def _hf_offline() -> bool:
    return any(
        os.environ.get(v, "").lower() in _TRUE for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def weights_problem(model: str) -> str | None:
    """Why `hf/MODEL` (a model folder or a hub id) has no weights here, or None. Offline, a hub
    id must be in the Hugging Face cache; online it is downloaded when first used."""
    path = Path(model).expanduser()
    if path.is_file():
        return None
    if path.exists():
        return None if (path / "config.json").exists() else f"no model folder at {model}"
    if path.is_absolute() or model.startswith((".", "~")) or model.count("/") > 1:
        return f"local weights not found at {model}"
    if not _hf_offline():
        return None
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(model, "config.json")
    except Exception:  # an id the hub refuses is not in its cache either
        cached = None
    if isinstance(cached, str):
        return None
    return (
        f"local weights not found: {model} is no folder and not in the Hugging Face cache "
        "(offline: HF_HUB_OFFLINE)"
    )


def check_model(model: ModelSpec) -> str | None:
    """What stops the gateway from using `model`, found without calling it (None: nothing)."""
    from benchfoundry.gateway import providers
    from benchfoundry.gateway.context import GatewayContext

    try:
        providers.provider_class(model)
        if model.provider == "openai":
            from benchfoundry.gateway.openai_compat import key_and_url, key_env

            if not model.model:
                return "give the model id (openai/MODEL[@BASE_URL])"
            if key_and_url(model)[0] is None:
                return f"no API key (set {key_env(model)} or give a base_url)"
        elif model.provider == "blind":  # needs nothing; building it checks its kind
            providers.create(model, GatewayContext())
        elif model.provider == "facts":  # reads the run's facts; its inner model needs its own
            return check_model(parse_model(model.model)) if model.model else "name the inner model"
        elif model.provider == "smollm2":
            from benchfoundry.gateway.local_smollm2 import smollm2_problem

            return smollm2_problem()
        elif model.provider == "hf":
            return weights_problem(model.model) if model.model else "give a folder or id"
    except (ModelConfigError, ValueError) as exc:
        return _short(exc, model)
    return None


def _endpoint(model: ModelSpec) -> ModelSpec | None:
    """The OpenAI-compatible endpoint model behind `model` (itself, or a fact reader's inner)."""
    if model.provider == "openai":
        return model
    if model.provider == "facts" and model.model:
        return _endpoint(parse_model(model.model))
    return None


def preflight(
    stage: StageRun,
    stages: list[str] | None = None,
    reach: bool = False,
    settled: set[str] | frozenset[str] = frozenset(),
) -> PreflightReport:
    """Check every model and every local weight that `stages` (default: the context's) will use
    with `stage`'s options, roles and catalogue; with `reach`, ask each endpoint model one tiny
    question too (one try, a short timeout, no response cache), except the `settled` ones,
    which have nothing left to ask (a finished evaluation run again needs no server)."""
    from benchfoundry.gateway import Gateway
    from benchfoundry.gateway.assemble import default_catalogue

    try:
        catalogue = default_catalogue(Path(stage.catalogue) if stage.catalogue else None)
    except ModelConfigError as exc:
        bad = ModelCheck(
            name="catalogue", where=["model_catalogue"], ok=False, problem=redact(str(exc))
        )
        return PreflightReport(results=[bad])
    results: list[ModelCheck] = []
    endpoints: dict[int, ModelSpec] = {}
    for name, where in named_models(stage, stages).items():
        try:
            model = resolve(name, catalogue)
        except (ModelConfigError, ValueError) as exc:
            results.append(ModelCheck(name=name, where=where, ok=False, problem=str(exc)))
            continue
        problem = check_model(model)
        results.append(
            ModelCheck(
                name=name, where=where, provider=model.provider, ok=problem is None, problem=problem
            )
        )
        if (
            reach
            and problem is None
            and name not in settled
            and (endpoint := _endpoint(model)) is not None
        ):
            endpoints[len(results) - 1] = endpoint.model_copy(
                update={"max_attempts": 1, "timeout_s": min(endpoint.timeout_s, REACH_TIMEOUT_S)}
            )
    for value, where in named_weights(stage, stages).items():
        problem = weights_problem(value)
        results.append(
            ModelCheck(
                name=value, where=where, provider="weights", ok=problem is None, problem=problem
            )
        )
    if endpoints:
        gateway = Gateway(catalogue)
        with ThreadPoolExecutor(max_workers=min(8, len(endpoints))) as pool:
            futures = {i: pool.submit(probe, gateway, m) for i, m in endpoints.items()}
        for index, future in futures.items():
            result = future.result()
            if result.ok or passing(result.error):
                update: dict[str, object] = {"latency_s": result.seconds}
            else:
                update = {"ok": False, "problem": unreachable(endpoints[index], result.error)}
            results[index] = results[index].model_copy(update=update)
    results += order_problems(stage, stages_of(stage.stages if stages is None else stages))
    if "ingest" in stages_of(stage.stages if stages is None else stages):
        for index, source in enumerate(stage.sources):
            problem = source_problem(source)
            results.append(
                ModelCheck(
                    name=describe_source(source), where=[f"sources[{index}]"], provider=SOURCE,
                    ok=problem is None, problem=problem,
                )
            )  # fmt: skip
    for i, result in enumerate(results):  # a last guard: no secret in any message
        if result.problem is not None:
            problem = redact(result.problem)
            results[i] = result.model_copy(update={"problem": problem})
    return PreflightReport(results=results, reached=reach)


_PASSING = re.compile(r"^(server_error|rate_limited|malformed_response|empty_response)\b")


def passing(error: str | None) -> bool:
    """A failed reach call that says nothing against the model: the server answered, with an
    error worth retrying (5xx, 429, an unreadable reply); the run's own calls retry it."""
    return bool(error) and _PASSING.match(error or "") is not None


def order_problems(stage: StageRun, names: list[str]) -> list[ModelCheck]:
    """Each table a stage's options make it read (`reads`) that no earlier stage of the run
    writes and the run folder does not hold yet: the build would fail only when that stage
    starts. A run folder at a URL is not looked into."""
    from benchfoundry.core.locations import is_url
    from benchfoundry.pipeline.registry import STAGES
    from benchfoundry.storage.tables import RunFolder

    local = bool(stage.run) and not is_url(stage.run)
    out = []
    written: set[str] = set()
    for name in names:
        entry = STAGES[name]
        options = getattr(stage.options, name, None)
        wants = options.reads() if options is not None else {}
        for where, (table, writer) in wants.items():
            if table in written or (local and RunFolder(stage.run).table_named(table).exists()):
                continue
            if not local:  # a run folder at a URL: what it holds is seen when it is opened
                continue
            out.append(
                ModelCheck(
                    name=name, where=[where], provider="stage", ok=False,
                    problem=f"reads `{table}`, which {writer} writes, but {writer} does not run "
                    f"before {name} here and the run folder has no {table} yet: add {writer} to "
                    "the stages (or change the option)",
                )
            )  # fmt: skip
        written.update(t for t in entry.outputs if "/" not in t and "." not in t)
    return out


def unreachable(model: ModelSpec, error: str | None) -> str:
    """Why an endpoint model could not answer its one question, where it was asked, and what
    to do about it."""
    from benchfoundry.gateway.openai_compat import key_env

    error = error or "no answer"
    where = f" at {model.display_url}" if model.display_url else ""
    if "connection" in error.split(":", 1)[0] or "timeout" in error.split(":", 1)[0]:
        fix = "is the server running, and is the URL right?"
    elif "HTTP 404" in error:
        fix = f"the server does not serve a model named '{model.model}' (its /models lists those it does)"
    elif "HTTP 401" in error or "HTTP 403" in error:
        fix = f"the server refused the key: set {key_env(model)} to a key it accepts"
    else:
        fix = "`benchfoundry models --check` asks it again"
    return f"not reached{where}: {error}; {fix}"


def check_or_raise(
    stage: StageRun,
    stages: list[str] | None = None,
    reach: bool = False,
    settled: set[str] | frozenset[str] = frozenset(),
) -> PreflightReport:
    """The preflight's report; `PreflightError` naming every problem when there is one."""
    report = preflight(stage, stages, reach, settled)
    if problems := report.problems:
        count = f"{len(problems)} problem{'s' if len(problems) > 1 else ''}"
        raise PreflightError(f"preflight: {count}: " + "; ".join(p.line() for p in problems))
    return report
