"""The stage registry: every stage of a build, what it reads and writes, its options, its plain
entry point and flow, and how its summary is shown.

The contract (docs/architecture.md): a stage is one module in `tasks/` whose entry point
`run(stage: StageRun, mapper: Mapper = INLINE) -> Summary` does the whole stage; its batches go
through `mapper`, which runs them in place (`INLINE`, for plain calls and tests) or as Prefect
tasks on the flow's task runner (`PrefectMapper`, what the stage's flow passes). Everything a
batch job gets is serialisable (paths, ids, records, pydantic options); models and backends are
built inside the worker from the options and kept per process. `build`, the stage commands of the
CLI, the Prefect artifacts and the build's closing report all come from `STAGES`.

Entry points and flows are named as `module:function` and imported when first used, so that this
module (part of the shared core) imports no stage and no flow.
"""

from __future__ import annotations

import importlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field

from benchfoundry.core import progress
from benchfoundry.pipeline.build_report import (
    ExtractSummary,
    GenerateSummary,
    IngestSummary,
    extract_markdown,
    extract_text,
    generate_markdown,
    generate_text,
    ingest_markdown,
    ingest_text,
)
from benchfoundry.pipeline.spec import (
    ConsensusOptions,
    EvaluateOptions,
    ExtractOptions,
    FilterOptions,
    GenerateOptions,
    IngestOptions,
    PublishOptions,
    ReviewOptions,
    SelectOptions,
    Source,
    StageOptions,
    describe_source,
)
from benchfoundry.tasks.evaluate.summary import (
    EvaluateSummary,
    evaluate_closing,
    evaluate_markdown,
    evaluate_text,
)
from benchfoundry.tasks.publish.summary import (
    PublishSummary,
    publish_closing,
    publish_markdown,
    publish_text,
)
from benchfoundry.tasks.qc.qc_report import ask_markdown, qc_text, select_markdown
from benchfoundry.tasks.qc.summary import AskSummary, SelectSummary
from benchfoundry.tasks.review.summary import ReviewSummary, review_markdown, review_text


class StageRun(BaseModel):
    """What a stage is given: the run folder, the spec's options, sources, taxonomy and model
    roles (masked names: credentials never travel in parameters), and the stages of this build.
    It is a plain pydantic value, so it goes into a flow's parameters and to any worker."""

    run: str
    options: StageOptions = Field(default_factory=StageOptions)
    sources: list[Source] = Field(default_factory=list)
    taxonomy: str | None = None
    models: dict[str, list[str]] = Field(default_factory=dict)
    catalogue: str | None = None
    stages: list[str] = Field(default_factory=list)  # the build's; empty: this stage alone
    name: str | None = None  # the spec's name (what a release is called)
    description: str = ""

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
        from benchfoundry.storage.tables import RunFolder

        root = run.root if isinstance(run, RunFolder) else run
        return cls(
            run=str(root),
            sources=list(sources or []),
            catalogue=str(catalogue) if catalogue else None,
            options=StageOptions(**sections),
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

    @classmethod
    def from_build(cls, run: Any, name: str) -> StageRun | None:
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
        section = StageOptions.model_fields[name].annotation
        try:
            options = section.model_validate(built.get("options", {}).get(name, {}))  # type: ignore[union-attr]
        except ValueError as exc:
            raise ValueError(
                f"the build manifest's {name} options do not validate: {exc}"
            ) from None
        return cls(
            run=str(Path(run).resolve()),
            options=StageOptions(**{name: options}),
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
    from benchfoundry.pipeline.spec import SpecError, load_spec

    try:
        load_spec(spec_path)
    except (SpecError, OSError):
        return


# --- running batches --------------------------------------------------------------------------

Job = tuple[tuple[Any, ...], int]  # (arguments of the batch function, items it holds)


class Mapper(Protocol):
    """Runs a stage's batch function over its jobs and yields the results in job order."""

    def map(
        self,
        fn: Callable[..., Any],
        jobs: Iterable[Job],
        *,
        label: str,
        total: int | None = None,
        ahead: int = 2,
        retries: int = 0,
    ) -> Iterator[Any]: ...


class InlineMapper:
    """Each job in turn, in this process: a stage called as a plain function."""

    def map(self, fn, jobs, *, label, total=None, ahead=2, retries=0):  # noqa: ARG002
        for args, size in jobs:
            result = fn(*args)
            progress.report(label, size, total)
            yield result


INLINE = InlineMapper()


@dataclass
class PrefectMapper:
    """Each job as a Prefect task run on the current flow's task runner (threads, Dask
    processes...), at most `ahead` at once; progress is reported here, in the flow's process, as
    each result comes back."""

    _tasks: dict[tuple[Callable[..., Any], int], Any] = field(default_factory=dict)

    def _task(self, fn: Callable[..., Any], label: str, retries: int) -> Any:
        from prefect import task
        from prefect.cache_policies import NO_CACHE

        key = (fn, retries)
        if key not in self._tasks:
            name = label.replace(" ", "-")
            self._tasks[key] = task(fn, name=name, retries=retries, cache_policy=NO_CACHE)
        return self._tasks[key]

    def map(self, fn, jobs, *, label, total=None, ahead=2, retries=0):
        yield from windowed(self._task(fn, label, retries).submit, jobs, label, total, ahead)


def windowed(
    submit: Callable[..., Any], jobs: Iterable[Job], label: str, total: int | None, ahead: int
) -> Iterator[Any]:
    """Each job through `submit` (which returns a future), at most `ahead` in flight, results
    in job order, progress reported as each comes back."""
    pending = iter(jobs)
    in_flight: deque = deque()
    while True:
        while len(in_flight) < max(1, ahead):
            job = next(pending, None)
            if job is None:
                break
            args, size = job
            in_flight.append((submit(*args), size))
        if not in_flight:
            return
        future, size = in_flight.popleft()
        result = future.result()
        progress.report(label, size, total)
        yield result


# --- the registry ---------------------------------------------------------------------------


def _load(target: str) -> Callable[..., Any]:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class Stage:
    """One registry entry."""

    name: str
    does: str  # one line, for `benchfoundry stages` and the CLI's help
    inputs: tuple[str, ...]  # tables it reads (`spec:` marks what it takes from the spec)
    outputs: tuple[str, ...]  # tables and files it writes
    options: type[BaseModel]  # its section of the spec's `options`, under its name
    summary: type[BaseModel]
    entry: str  # module:function, the plain entry point
    flow: str  # module:function, its Prefect flow
    markdown: Callable[[Any], str]  # the artifact, and the command's text output
    text: Callable[[Any], list[str]]  # its lines in the build's closing report
    requires: tuple[str, str] | None = None  # (table, stage that writes it) for a lone run
    group: str | None = None  # a command that runs several stages in turn (`qc`)
    uses: tuple[str, ...] = ()  # StageRun fields recorded in the manifest beside its options
    closing: Callable[[Any], list[str]] | None = None  # its lines under the report's "Outputs"

    def run(self, stage: StageRun, mapper: Mapper = INLINE) -> BaseModel:
        """The stage as a plain call (no Prefect), or with the mapper its flow passes; its
        section of the run manifest records the options and the summary."""
        from benchfoundry.storage.tables import RunFolder

        summary = _load(self.entry)(stage, mapper)
        RunFolder(stage.run).update_manifest(self.name, self.manifest(stage, summary))
        return summary

    def flow_function(self) -> Callable[..., Any]:
        return _load(self.flow)

    def stage_options(self, options: StageOptions) -> BaseModel:
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
            "options": f"{self.options.__module__}.{self.options.__qualname__}",
            "summary": f"{self.summary.__module__}.{self.summary.__qualname__}",
            "entry": self.entry,
            "flow": self.flow,
            "group": self.group,
        }


def _ask_lines(summary: AskSummary) -> list[str]:
    return qc_text(summary, None, None)


def _select_lines(summary: SelectSummary) -> list[str]:
    return qc_text(None, None, summary)


def _ask_markdown(summary: AskSummary) -> str:
    return "\n".join(ask_markdown(summary))


def _select_markdown(summary: SelectSummary) -> str:
    return "\n".join(select_markdown(summary))


def _ask_step(name: str, does: str, inputs: tuple[str, ...], options: type[BaseModel]) -> Stage:
    """Filter and consensus: an ensemble answers every candidate (`tasks.qc.ask_job`)."""
    return Stage(
        name=name,
        does=does,
        inputs=inputs,
        outputs=("judgements",),
        options=options,
        summary=AskSummary,
        entry=f"benchfoundry.tasks.qc.stage:run_{name}",
        flow=f"benchfoundry.flows.qc:{name}_flow",
        markdown=_ask_markdown,
        text=_ask_lines,
        requires=("candidates", "generate"),
        group="qc",
        uses=("models", "catalogue"),
    )


STAGES: dict[str, Stage] = {
    s.name: s
    for s in (
        Stage(
            name="ingest",
            does="read sources, verify and store each image once, seed questions, quarantine",
            inputs=("spec:sources",),
            outputs=("images", "image_sources", "candidates", "quarantine"),
            options=IngestOptions,
            summary=IngestSummary,
            entry="benchfoundry.tasks.ingest.stage:run",
            flow="benchfoundry.flows.ingest:ingest",
            markdown=ingest_markdown,
            text=ingest_text,
            uses=("sources",),
        ),
        Stage(
            name="extract",
            does="visual facts per image: instances, OCR lines, captions",
            inputs=("images",),
            outputs=("visual_facts", "quarantine"),
            options=ExtractOptions,
            summary=ExtractSummary,
            entry="benchfoundry.tasks.extract.stage:run",
            flow="benchfoundry.flows.extract:extract",
            markdown=extract_markdown,
            text=extract_text,
            requires=("images", "ingest"),
            uses=("catalogue",),
        ),
        Stage(
            name="generate",
            does="candidate questions per dimension from the facts (templates, LLMs)",
            inputs=("visual_facts", "images", "candidates", "spec:taxonomy", "spec:models"),
            outputs=("candidates", "quarantine"),
            options=GenerateOptions,
            summary=GenerateSummary,
            entry="benchfoundry.tasks.generate.stage:run",
            flow="benchfoundry.flows.generate:generate",
            markdown=generate_markdown,
            text=generate_text,
            requires=("visual_facts", "extract"),
            uses=("taxonomy", "models", "catalogue"),
        ),
        _ask_step(
            "filter",
            "text-only ensemble (no image) under CircularEval: answers as judgements",
            ("candidates", "quarantine", "spec:models"),
            FilterOptions,
        ),
        _ask_step(
            "consensus",
            "vision-language ensemble (with image) under CircularEval: judgements",
            ("candidates", "images", "visual_facts", "quarantine", "spec:models"),
            ConsensusOptions,
        ),
        Stage(
            name="select",
            does="hit counts, flags, difficulty bins and the balanced selection",
            inputs=("candidates", "judgements", "quarantine", "spec:models"),
            outputs=("scored", "reports/qc.md", "reports/qc.png"),
            options=SelectOptions,
            summary=SelectSummary,
            entry="benchfoundry.tasks.qc.stage:run_select",
            flow="benchfoundry.flows.qc:select_flow",
            markdown=_select_markdown,
            text=_select_lines,
            requires=("candidates", "generate"),
            group="qc",
            uses=("models", "catalogue", "stages"),
        ),
        Stage(
            name="review",
            does="the hand-off to people: review batches per dimension and reviewer, cross-checks",
            inputs=("candidates", "scored", "review_batches", "reviews"),
            outputs=("review_batches", "reviews"),
            options=ReviewOptions,
            summary=ReviewSummary,
            entry="benchfoundry.tasks.review.stage:run",
            flow="benchfoundry.flows.review:review",
            markdown=review_markdown,
            text=review_text,
            requires=("scored", "qc"),
            group="review",
        ),
        Stage(
            name="publish",
            does="the publish gate (Great Expectations), then an immutable versioned release",
            inputs=("candidates", "scored", "reviews", "images", "visual_facts"),
            outputs=("<to>/<name>/<version>/", "<to>/<name>/latest", "reports/data_docs/"),
            options=PublishOptions,
            summary=PublishSummary,
            entry="benchfoundry.tasks.publish.stage:run",
            flow="benchfoundry.flows.publish:publish",
            markdown=publish_markdown,
            text=publish_text,
            closing=publish_closing,
            requires=("reviews", "review"),
            group="publish",
        ),
        Stage(
            name="evaluate",
            does="models asked a dataset's questions (CircularEval or vanilla, or open-ended and "
            "graded k times), with intervals",
            inputs=("spec:dataset (default: the build's latest release)", "spec:models"),
            outputs=("results", "model_cache.sqlite", "usage.json"),
            options=EvaluateOptions,
            summary=EvaluateSummary,
            entry="benchfoundry.tasks.evaluate.stage:run",
            flow="benchfoundry.flows.evaluate:evaluate",
            markdown=evaluate_markdown,
            text=evaluate_text,
            closing=evaluate_closing,
            group="evaluate",
            uses=("catalogue",),
        ),
    )
}


def stage_names() -> tuple[str, ...]:
    return tuple(STAGES)


def group(name: str) -> list[Stage]:
    return [s for s in STAGES.values() if s.group == name]


QC_STEPS = tuple(s.name for s in group("qc"))  # the `qc` command's steps, in order


def run_in_flow(name: str, stage: StageRun) -> BaseModel:
    """What every stage flow does: the entry point with Prefect tasks for its batches, then the
    Prefect artifact from the registry entry."""
    from prefect.artifacts import create_markdown_artifact

    entry = STAGES[name]
    summary = entry.run(stage, PrefectMapper())
    create_markdown_artifact(
        markdown=entry.markdown(summary), key=f"{name}-summary", description=entry.does
    )
    return summary
