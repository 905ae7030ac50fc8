"""The build spec: a declarative YAML file validated by models that forbid unknown keys.

Its `options` section is assembled from the registered stages' options models (one section per
stage, under its name), so a new stage needs no line here. Relative paths in a spec file are
resolved against the folder that holds the file, each options model resolving its own, so a
spec means the same thing from any working directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    Field,
    SerializeAsAny,
    ValidationError,
    field_validator,
    model_validator,
)

from benchfoundry.core.errors import UserError
from benchfoundry.core.locations import Location, is_fixed, is_url
from benchfoundry.core.options import SpecModel
from benchfoundry.core.spec_errors import problem
from benchfoundry.core.taxonomy import DEFAULT_TAXONOMY
from benchfoundry.gateway.roles import role_problem
from benchfoundry.pipeline.registry import (
    STAGES,
    StageOptions,
    StageRun,
    stage_names,
    stage_options,
)
from benchfoundry.sources.models import (
    FolderSource,
    PackagedSource,
    ParquetSource,
    Source,
    TsvSource,
)


class RunnerSpec(SpecModel):
    """Where the batch stages' Prefect tasks run: `thread` (a thread pool in the flow's
    process; the default), `dask` (a Dask cluster: a local one of `workers` processes, or the
    scheduler at `address`) or `ray` (a Ray instance: a local one with `workers` CPUs, or the
    cluster at `address`; the `ray` extra). Task parameters are paths, ids, records and
    options, so each gives the same tables."""

    kind: Literal["thread", "dask", "ray"] = "thread"
    workers: int | None = Field(default=None, ge=1)
    address: str | None = None

    @model_validator(mode="after")
    def _address_is_dask(self) -> RunnerSpec:
        if self.address and self.kind == "thread":
            raise ValueError(
                "runner.address names a Dask scheduler or a Ray cluster; set kind: dask or ray"
            )
        return self


def _stage_names() -> list[str]:
    return list(stage_names())


class BuildSpec(SpecModel):
    """What to build: sources, taxonomy, stages and their options, models by role, output."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    description: str = ""
    sources: list[Source] = Field(min_length=1)
    taxonomy: str | None = None
    stages: list[str] = Field(default_factory=_stage_names)
    # One section per registered stage (`options_model()` of the registry), under its name.
    options: SerializeAsAny[StageOptions] = Field(default_factory=stage_options)  # type: ignore[valid-type]
    models: dict[str, list[str]] = Field(
        default_factory=dict,
        description="role -> catalogue names or model spec strings, e.g. text_only: [blind/random]",
    )
    model_catalogue: Path | None = Field(
        default=None,
        description="model catalogue YAML (default: the packaged benchfoundry/data/models.yaml)",
    )
    output: Location = Field(
        default=Path("runs/default"),
        description="the run folder (relative to the spec's folder) or a URL (s3://bucket/runs/x); "
        "default: runs/NAME, the spec's name",
    )
    runner: RunnerSpec = Field(default_factory=RunnerSpec)

    @model_validator(mode="before")
    @classmethod
    def _output_named(cls, data: Any) -> Any:
        """With no `output`, the run folder is named as the spec: runs/NAME."""
        if (
            isinstance(data, dict)
            and data.get("output") is None
            and isinstance(data.get("name"), str)
        ):
            return {**data, "output": f"runs/{data['name']}"}
        return data

    @field_validator("options", mode="before")
    @classmethod
    def _sections(cls, value: Any) -> BaseModel:
        return stage_options(value)

    @field_validator("models")
    @classmethod
    def _models_masked(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        """Roles from the closed set, each with at least one model, by their masked names:
        credentials in an endpoint URL are kept for the wire only, never in the manifest, flow
        parameters or tables."""
        from benchfoundry.gateway.models import protect_models

        if problem := role_problem(value):
            raise ValueError(problem)
        return protect_models(value)

    @field_validator("stages")
    @classmethod
    def _stages_available(cls, value: list[str]) -> list[str]:
        available = _stage_names()
        missing = [s for s in value if s not in available]
        if missing:
            raise ValueError(
                f"stage(s) {missing} are not available in this version; available: "
                f"{', '.join(available)}"
            )
        return value

    def resolved(self, base: Path) -> BuildSpec:
        """A copy with every relative path made absolute against `base`: the sources, the
        output, the catalogue, a taxonomy file, and each stage's options (their own `resolved`)."""

        def fix(path: Path | str) -> Path | str:
            return path if is_fixed(path) else (base / path).resolve()

        sources = []
        for source in self.sources:
            updates = {}
            for name in ("path", "image_root", "annotations"):
                value = getattr(source, name, None)
                if value is not None and not is_fixed(value):
                    updates[name] = fix(value)
            sources.append(source.model_copy(update=updates))
        options = self.options.model_copy(
            update={
                name: getattr(self.options, name).resolved(fix, base)
                for name in type(self.options).model_fields
            }
        )
        taxonomy = self.taxonomy
        if taxonomy and taxonomy.endswith((".yaml", ".yml")) and not Path(taxonomy).is_absolute():
            taxonomy = str(fix(Path(taxonomy)))
        return self.model_copy(
            update={
                "options": options,
                "taxonomy": taxonomy,
                "sources": sources,
                "output": fix(self.output),
                "model_catalogue": fix(self.model_catalogue) if self.model_catalogue else None,
            }
        )


class SpecError(UserError, ValueError):
    """A build spec that cannot be read or does not validate."""


def _options_section(model: type[BaseModel], field: str) -> type[BaseModel] | None:
    """The `options` section's model, assembled from the registry (its annotation does not say)."""
    return type(stage_options()) if model is BuildSpec and field == "options" else None


def load_spec(path: str | Path) -> BuildSpec:
    """Read, validate and resolve a build spec file."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SpecError(f"cannot read build spec {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise SpecError(f"build spec {path} is not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise SpecError(f"build spec {path} must be a mapping at the top level")
    try:
        spec = BuildSpec.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(problem(BuildSpec, err, _options_section) for err in exc.errors())
        raise SpecError(f"build spec {path} is invalid: {problems}") from None
    spec = spec.resolved(path.parent.resolve())
    check_models(spec, path)
    check_dimensions(spec, path)
    return spec


def check_dimensions(spec: BuildSpec, path: Path) -> None:
    """Every dimension the options name must be a dimension of the spec's taxonomy."""
    from benchfoundry.core.taxonomy import TaxonomyError, load_taxonomy

    try:
        taxonomy = load_taxonomy(spec.taxonomy or DEFAULT_TAXONOMY)
    except TaxonomyError as exc:
        raise SpecError(f"build spec {path}: taxonomy: {exc}") from None
    known = {d.id for d in taxonomy.leaves()}
    for name in type(spec.options).model_fields:
        for key, dimensions in getattr(spec.options, name).named_dimensions().items():
            unknown = [d for d in dimensions if d not in known]
            if unknown:
                raise SpecError(
                    f"build spec {path}: {key}: {', '.join(map(repr, unknown))} "
                    f"{'is not a dimension' if len(unknown) == 1 else 'are not dimensions'} of "
                    f"taxonomy '{taxonomy.name}' (its dimensions: {', '.join(sorted(known))})"
                )


def check_models(spec: BuildSpec, path: Path) -> None:
    """Every model the spec names must resolve (a catalogue entry or a valid spec string)."""
    from benchfoundry.gateway.assemble import default_catalogue
    from benchfoundry.gateway.errors import ModelConfigError
    from benchfoundry.gateway.models import resolve

    try:
        catalogue = default_catalogue(spec.model_catalogue)
        for _role, names in spec.models.items():
            for name in names:
                resolve(name, catalogue)
    except ModelConfigError as exc:
        raise SpecError(f"build spec {path}: models: {exc}") from None


def parse_source(text: str) -> FolderSource | TsvSource | ParquetSource | PackagedSource:
    """A source from a command-line argument: a folder, a .tsv, a .parquet file, or
    `packaged` / `packaged:NAME[,NAME]` for photos shipped in installed packages."""
    if text == "packaged" or text.startswith("packaged:"):
        names = [n for n in text.partition(":")[2].split(",") if n]
        return PackagedSource(packages=names) if names else PackagedSource()
    if is_url(text):  # an object store's folder or file, told apart by its name
        lower = text.lower()
        if lower.endswith(".tsv"):
            return TsvSource(path=text)
        if lower.endswith((".parquet", ".pq")):
            return ParquetSource(path=text)
        return FolderSource(path=text)
    path = Path(text).resolve()
    if path.is_dir():
        return FolderSource(path=path)
    suffix = path.suffix.lower()
    if suffix == ".tsv":
        return TsvSource(path=path)
    if suffix in (".parquet", ".pq"):
        return ParquetSource(path=path)
    if not path.exists():
        raise SpecError(f"source {text} does not exist")
    raise SpecError(
        f"cannot tell what kind of source {text} is: give a folder, a .tsv, a .parquet, or 'packaged'"
    )


def stage_from_build(run: Any, name: str) -> StageRun | None:
    """Stage `name`'s context from the build spec the run's manifest keeps, or None when the
    run has no build manifest. Only that stage's options are taken: the manifest keeps the
    spec as JSON (keys sorted), which is not always a spec again (the difficulty bins' order,
    for one). A section that does not validate raises ValueError naming the stage."""
    from benchfoundry.storage.tables import RunFolder

    build = RunFolder(run).read_manifest().get("build", {})
    built = build.get("spec")
    if not built:
        return None
    _remember_real_models(build.get("spec_path"))
    section = STAGES[name].options_type()
    try:
        options = section.model_validate(built.get("options", {}).get(name, {}))
    except ValueError as exc:
        raise ValueError(f"the build manifest's {name} options do not validate: {exc}") from None
    return StageRun(
        run=str(Path(run).resolve()),
        options=stage_options({name: options}),
        taxonomy=built.get("taxonomy"),
        models=built.get("models") or {},
        catalogue=built.get("model_catalogue"),
        stages=[name],
        name=built.get("name"),
        description=built.get("description") or "",
    )


def _remember_real_models(spec_path: str | None) -> None:
    """The manifest keeps model names masked (a URL's credentials hidden); the spec file the
    build read holds the real strings. Reading it again in this process (a worker that runs a
    stage from the manifest: the evaluation a new release triggers) remembers them, so the
    masked names resolve to the real endpoints here too. A file that is gone or no longer reads
    leaves the names as they are: a model that needs its credentials then fails, saying so."""
    if not spec_path or not Path(spec_path).is_file():
        return
    try:
        load_spec(spec_path)
    except (SpecError, OSError):
        return
