"""The stage registry: every stage of a build, what it reads and writes, and where its parts
are: its options model, its summary model, its plain entry point and its flow.

The contract (docs/architecture.md): a stage is one package `benchfoundry.tasks.<stage>` whose
entry point `run(stage: StageRun, mapper: Mapper = INLINE) -> StageSummary` does the whole
stage; its batches go through `mapper`, which runs them in place (`INLINE`, for plain calls and
tests) or as Prefect tasks on the flow's task runner (`PrefectMapper`, what the stage's flow
passes). Everything a batch job gets is serialisable (paths, ids, records, pydantic options);
models and backends are built inside the worker from the options and kept per process. `build`,
the stage commands of the CLI, the Prefect artifacts and the build's closing report all come
from `STAGES`, and the spec's `options` section is assembled from the stages' options models.

Every part is named as `module:attribute` and imported when first used, so that this module
imports no stage and no flow: adding a stage is one package under `tasks/`, one flow file and
one line here (or `register()` from a plug-in).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pydantic import BaseModel, Field, SerializeAsAny, create_model, field_validator

from benchfoundry.core.batches import INLINE, Mapper, windowed
from benchfoundry.core.options import SpecModel, StageOptionsModel
from benchfoundry.core.summary import StageSummary
from benchfoundry.sources.models import Source, describe_source
from benchfoundry.storage.tables import RunFolder


def _load(target: str) -> Any:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class Stage:
    """One registry entry: what the stage is, and where its parts are."""

    name: str
    does: str  # one line, for `benchfoundry stages` and the CLI's help
    inputs: tuple[str, ...]  # tables it reads (`spec:` marks what it takes from the spec)
    outputs: tuple[str, ...]  # tables and files it writes
    options: str  # module:class of its section of the spec's `options`, under its name
    summary: str  # module:class of its summary (a StageSummary)
    entry: str  # module:function, the plain entry point
    flow: str  # module:function, its Prefect flow
    requires: tuple[str, str] | None = None  # (table, stage that writes it) for a lone run
    group: str | None = None  # a command that runs several stages in turn (`qc`)
    uses: tuple[str, ...] = ()  # StageRun fields recorded in the manifest beside its options

    @classmethod
    def of(cls, name: str, does: str, package: str, **parts: Any) -> Stage:
        """An entry whose parts sit where the layout puts them: `<package>.options:Options`,
        `<package>.summary:Summary`, `<package>.stage:run` and `benchfoundry.flows.<name>:<name>`,
        each overridable by keyword."""
        title = name.capitalize()
        return cls(
            name=name,
            does=does,
            options=parts.pop("options", f"{package}.options:{title}Options"),
            summary=parts.pop("summary", f"{package}.summary:{title}Summary"),
            entry=parts.pop("entry", f"{package}.stage:run"),
            flow=parts.pop("flow", f"benchfoundry.flows.{name}:{name}"),
            **parts,
        )

    def options_type(self) -> type[BaseModel]:
        return _load(self.options)

    def summary_type(self) -> type[StageSummary]:
        return _load(self.summary)

    def run(self, stage: StageRun, mapper: Mapper = INLINE) -> StageSummary:
        """The stage as a plain call (no Prefect), or with the mapper its flow passes; its
        section of the run manifest records the options and the summary."""
        summary = _load(self.entry)(stage, mapper)
        RunFolder(stage.run).update_manifest(self.name, self.manifest(stage, summary))
        return summary

    def flow_function(self) -> Any:
        return _load(self.flow)

    def stage_options(self, options: BaseModel) -> BaseModel:
        return getattr(options, self.name)

    def manifest(self, stage: StageRun, summary: BaseModel) -> dict[str, Any]:
        """What the run manifest keeps of one run of this stage."""
        record: dict[str, Any] = {
            "options": self.stage_options(stage.options).model_dump(mode="json"),
            "summary": summary.model_dump(mode="json"),
        }
        for name in self.uses:
            value = getattr(stage, name)
            record[name] = [describe_source(s) for s in value] if name == "sources" else value
        return record

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "does": self.does,
            "inputs": list(self.inputs),
            "outputs": list(self.outputs),
            "options": self.options.replace(":", "."),
            "option_keys": list(self.options_type().model_fields),
            "summary": self.summary.replace(":", "."),
            "entry": self.entry,
            "flow": self.flow,
            "group": self.group,
        }


def _qc_step(name: str, does: str, inputs: tuple[str, ...]) -> Stage:
    """Filter and consensus: an ensemble answers every candidate."""
    return Stage.of(
        name,
        does,
        "benchfoundry.tasks.qc",
        inputs=inputs,
        outputs=("judgements",),
        summary="benchfoundry.tasks.qc.summary:AskSummary",
        entry=f"benchfoundry.tasks.qc.stage:run_{name}",
        flow=f"benchfoundry.flows.qc:{name}_flow",
        requires=("candidates", "generate"),
        group="qc",
        uses=("models", "catalogue"),
    )


_QC = "benchfoundry.tasks.qc"
STAGES: dict[str, Stage] = {
    s.name: s
    for s in (
        Stage.of(
            "ingest",
            "read sources, verify and store each image and clip once (keyframes of each "
            "annotated segment as images), seed questions, quarantine",
            "benchfoundry.tasks.ingest",
            inputs=("spec:sources",),
            outputs=("images", "image_sources", "clips", "segments", "candidates", "quarantine"),
            uses=("sources",),
        ),
        Stage.of(
            "extract",
            "visual facts per image: instances, OCR lines, captions",
            "benchfoundry.tasks.extract",
            inputs=("images",),
            outputs=("visual_facts", "quarantine"),
            requires=("images", "ingest"),
            uses=("catalogue",),
        ),
        Stage.of(
            "generate",
            "candidate questions per dimension from the facts (templates, LLMs)",
            "benchfoundry.tasks.generate",
            inputs=(
                "visual_facts",
                "images",
                "segments",
                "candidates",
                "spec:taxonomy",
                "spec:models",
            ),
            outputs=("candidates", "not_asked", "quarantine"),
            requires=("visual_facts", "extract"),
            uses=("taxonomy", "models", "catalogue"),
        ),
        _qc_step(
            "filter",
            "text-only ensemble (no image) under CircularEval: answers as judgements",
            ("candidates", "quarantine", "spec:models"),
        ),
        _qc_step(
            "consensus",
            "vision-language ensemble (with image) under CircularEval: judgements",
            ("candidates", "images", "visual_facts", "quarantine", "spec:models"),
        ),
        Stage.of(
            "select",
            "hit counts, flags, difficulty bins and the balanced selection",
            _QC,
            inputs=("candidates", "judgements", "quarantine", "spec:models"),
            outputs=("scored", "reports/qc.md", "reports/qc.png"),
            entry=f"{_QC}.stage:run_select",
            flow="benchfoundry.flows.qc:select_flow",
            requires=("candidates", "generate"),
            group="qc",
            uses=("models", "catalogue", "stages"),
        ),
        Stage.of(
            "translate",
            "a twin of each item in other languages (MMBench-CN): template questions written "
            "natively, others by the translator model, every twin checked",
            "benchfoundry.tasks.translate",
            inputs=("candidates", "scored", "quarantine", "spec:models"),
            outputs=("translations", "quarantine"),
            requires=("candidates", "generate"),
            uses=("models", "catalogue"),
        ),
        Stage.of(
            "review",
            "the hand-off to people: review batches per dimension and reviewer, cross-checks",
            "benchfoundry.tasks.review",
            inputs=("candidates", "scored", "review_batches", "reviews"),
            outputs=("review_batches", "reviews"),
            requires=("scored", "qc"),
            group="review",
        ),
        Stage.of(
            "publish",
            "the publish gate (Great Expectations), then an immutable versioned release",
            "benchfoundry.tasks.publish",
            inputs=("candidates", "scored", "reviews", "images", "visual_facts"),
            outputs=("<to>/<name>/<version>/", "<to>/<name>/latest", "reports/data_docs/"),
            requires=("reviews", "review"),
            group="publish",
        ),
        Stage.of(
            "evaluate",
            "models asked a dataset's questions (CircularEval or vanilla, or open-ended and graded k times), with intervals",
            "benchfoundry.tasks.evaluate",
            inputs=("spec:dataset (default: the build's latest release)", "spec:models"),
            outputs=("results", "model_cache.sqlite", "usage.json"),
            group="evaluate",
            uses=("catalogue",),
        ),
    )
}


def register(stage: Stage) -> None:
    """Add a stage after the built-in ones, at run time (a test's toy stage does): the spec's
    options model takes its section from then on. The CLI's commands are made from the
    registry when the CLI is imported, so a stage registered later runs through `build`."""
    if stage.name in STAGES:
        raise ValueError(f"a stage named {stage.name!r} is registered already")
    STAGES[stage.name] = stage


def unregister(name: str) -> None:
    """Take a stage that `register` added out again; the built-in ones stay."""
    if name in BUILT_IN:
        raise ValueError(f"{name!r} is a built-in stage")
    STAGES.pop(name)


def stage_names() -> tuple[str, ...]:
    return tuple(STAGES)


def group(name: str) -> list[Stage]:
    return [s for s in STAGES.values() if s.group == name]


QC_STEPS = tuple(s.name for s in group("qc"))  # the `qc` command's steps, in order


BUILT_IN = tuple(STAGES)


@cache
def _options_model(names: tuple[str, ...]) -> type[SpecModel]:
    """One section per stage in `names`. With stages added to the built-in ones, the model
    extends the built-in `StageOptions`, so a value of it is a `StageOptions` still."""
    extends = names[: len(BUILT_IN)] == BUILT_IN and names != BUILT_IN
    fields: dict[str, Any] = {}
    for name in names[len(BUILT_IN) :] if extends else names:
        options = STAGES[name].options_type()
        if not (isinstance(options, type) and issubclass(options, StageOptionsModel)):
            raise TypeError(
                f"stage {name!r}: its options {STAGES[name].options} must derive from "
                "benchfoundry.core.options.StageOptionsModel"
            )
        fields[name] = (options, Field(default_factory=options))
    return create_model(
        "StageOptions",
        __base__=StageOptions if extends else SpecModel,
        __module__=__name__,
        __doc__="Per-stage options: one section per registered stage, under its name.",
        **fields,
    )


def options_model() -> type[SpecModel]:
    """The spec's `options` model: one section per registered stage, each its stage's options
    model (imported here, lazily: options modules are light)."""
    return _options_model(stage_names())


# The built-in stages' options model, importable by name (so a StageRun pickles by reference
# into Dask and Ray workers), and the type of every StageRun's and spec's options.
StageOptions = options_model()


def stage_options(value: Any = None) -> SpecModel:
    """Options for every stage from a mapping (or the defaults), validated section by section."""
    model = options_model()
    if isinstance(value, model):
        return value
    if isinstance(value, BaseModel):
        value = {name: getattr(value, name) for name in type(value).model_fields}
    return model.model_validate(value or {})


class StageRun(BaseModel):
    """What a stage is given: the run folder, the spec's options, sources, taxonomy and model
    roles (masked names: credentials never travel in parameters), and the stages of this build.
    It is a plain pydantic value, so it goes into a flow's parameters and to any worker."""

    run: str
    options: SerializeAsAny[StageOptions] = Field(default_factory=stage_options)  # type: ignore[valid-type]
    sources: list[Source] = Field(default_factory=list)
    taxonomy: str | None = None
    models: dict[str, list[str]] = Field(default_factory=dict)
    catalogue: str | None = None
    stages: list[str] = Field(default_factory=list)  # the build's; empty: this stage alone
    name: str | None = None  # the spec's name (what a release is called)
    description: str = ""

    @field_validator("options", mode="before")
    @classmethod
    def _sections(cls, value: Any) -> BaseModel:
        return stage_options(value)

    @classmethod
    def make(
        cls,
        run: Any,
        *,
        sources: list[Source] | None = None,
        catalogue: Any = None,
        **sections: BaseModel,
    ) -> StageRun:
        """A plain call's context: the run folder (a path or a `RunFolder`), and the option
        sections given by stage name (`extract=ExtractOptions(...)`), the rest default."""
        root = run.root if isinstance(run, RunFolder) else run
        return cls(
            run=str(root),
            sources=list(sources or []),
            catalogue=str(catalogue) if catalogue else None,
            options=stage_options(sections),
        )

    @classmethod
    def from_spec(cls, spec: Any, run: str, stages: list[str] | None = None) -> StageRun:
        return cls(
            run=run,
            options=spec.options,
            sources=spec.sources,
            taxonomy=spec.taxonomy,
            models=dict(spec.models),
            catalogue=str(spec.model_catalogue) if spec.model_catalogue else None,
            stages=list(stages if stages is not None else spec.stages),
            name=spec.name,
            description=spec.description,
        )


@dataclass
class PrefectMapper:
    """Each job as a Prefect task run on the current flow's task runner (threads, Dask
    processes...), at most `ahead` at once; progress is reported here, in the flow's process, as
    each result comes back."""

    _tasks: dict[tuple[Any, int], Any] = field(default_factory=dict)

    def _task(self, fn: Any, label: str, retries: int) -> Any:
        from prefect import task
        from prefect.cache_policies import NO_CACHE

        key = (fn, retries)
        if key not in self._tasks:
            name = label.replace(" ", "-")
            self._tasks[key] = task(fn, name=name, retries=retries, cache_policy=NO_CACHE)
        return self._tasks[key]

    def map(self, fn, jobs, *, label, total=None, ahead=2, retries=0):
        yield from windowed(self._task(fn, label, retries).submit, jobs, label, total, ahead)


def run_in_flow(name: str, stage: StageRun) -> StageSummary:
    """What every stage flow does: the entry point with Prefect tasks for its batches, then the
    Prefect artifact of its summary."""
    from prefect.artifacts import create_markdown_artifact

    entry = STAGES[name]
    summary = entry.run(stage, PrefectMapper())
    create_markdown_artifact(
        markdown=summary.markdown(), key=f"{name}-summary", description=entry.does
    )
    return summary
