"""The evaluate stage's options (the spec's `options.evaluate`)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Self

from pydantic import Field, field_validator, model_validator

from benchfoundry.core.locations import Location, is_fixed
from benchfoundry.core.options import Fix, StageOptionsModel


class EvaluateOptions(StageOptionsModel):
    """An evaluation: models asked a dataset's questions through the answering engine."""

    dataset: Location | None = Field(
        default=None,
        description="a release folder, a VLMEvalKit MCQ TSV, an MMStar Parquet, or an "
        "open-ended set (an MM-Vet folder, a VLMEvalKit MMVet TSV) (relative to the spec); "
        "default: the build's latest release (options.publish.to/<name>)",
    )
    models: list[str] = Field(default_factory=list, description="the models to evaluate")
    mode: Literal["circular", "vanilla"] = Field(
        default="circular",
        description="circular: every rotation of the options must be answered right (MMBench); "
        "vanilla: the options once, as written",
    )
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
    concurrency: int | None = Field(
        default=None,
        ge=1,
        le=1024,
        description="an endpoint model's questions asked at once (default: the model's "
        "`concurrency` in the catalogue, 4); fewer while the server answers 429",
    )
    pool_languages: bool = Field(
        default=False,
        description="a bilingual release: the headline board pools every language's items "
        "(said so on the board); by default English is the headline and each other language "
        "has a board of its own",
    )
    allow_failures: bool = Field(
        default=False,
        description="exit 0 even when some questions could not be answered (their calls failed "
        "after retries: scored wrong and counted either way); by default `evaluate` then exits 3",
    )
    gradings: int = Field(
        default=5, ge=1, le=20, description="open-ended sets: gradings per answer (MM-Vet: 5)"
    )
    grading_tries: int = Field(
        default=3, ge=1, le=10, description="open-ended sets: tries for a readable grade"
    )
    max_answer_tokens: int = Field(
        default=512, ge=1, description="open-ended sets: the longest answer asked for"
    )
    probes: list[str] = Field(
        default_factory=list,
        description="probes of looking: image-swap asks every question again with another "
        "image of the dataset (a model above chance with the wrong image answers without "
        "looking)",
    )
    families: dict[str, list[str]] = Field(
        default_factory=dict,
        description="model families for in_build: a name -> glob patterns (fnmatch, "
        "case-insensitive) on a model's name, its name without the endpoint, its model id or "
        "provider/model id, e.g. {qwen: ['qwen*', 'Qwen/*']}: a model of a builder's family is "
        "marked in_build by family",
    )

    subset: str | None = Field(
        default=None,
        description="anchors:K asks only K anchor items chosen from the item analysis "
        "(`items`) and estimates each model's accuracy on the whole release (tinyBenchmarks)",
    )
    items: Location | None = Field(
        default=None,
        description="the item analysis the anchors come from (an items.parquet written by "
        "benchfoundry report; default: RUN/reports/items.parquet, else RUN/reports/evaluation/"
        "items.parquet)",
    )
    human_grades: Location | None = Field(
        default=None,
        description="open-ended sets: people's grades of some answers (a CSV or JSON Lines "
        "file: question, model, grade in [0, 1], grader); each model's judge score is "
        "corrected with them (prediction-powered inference)",
    )

    @field_validator("subset")
    @classmethod
    def _anchors(cls, value: str | None) -> str | None:
        from benchfoundry.tasks.evaluate.anchors import parse_subset

        if value is not None:
            parse_subset(value)
        return value

    @model_validator(mode="after")
    def _subset_or_limit(self) -> Self:
        if self.subset and self.limit:
            raise ValueError("limit and subset both choose the questions: give one of them")
        return self

    @field_validator("families")
    @classmethod
    def _patterns(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for name, patterns in value.items():
            if not name.strip() or not patterns or not all(p.strip() for p in patterns):
                raise ValueError(
                    f"family {name!r}: give a name and at least one non-empty pattern "
                    "(families: {qwen: ['qwen*', 'Qwen/*']})"
                )
        return value

    @field_validator("probes")
    @classmethod
    def _known_probes(cls, value: list[str]) -> list[str]:
        from benchfoundry.tasks.evaluate.probes import PROBES

        unknown = [p for p in value if p not in PROBES]
        if unknown:
            raise ValueError(
                f"unknown probe {', '.join(map(repr, unknown))}; known probes: "
                + ", ".join(f"{name} ({does})" for name, does in PROBES.items())
            )
        return list(dict.fromkeys(value))

    @model_validator(mode="after")
    def _probes_need_images(self) -> Self:
        if self.probes and not self.with_image:
            raise ValueError(
                f"the probes ({', '.join(self.probes)}) ask with another image: they need the "
                "images shown (drop with_image: false / --no-image, or the probes)"
            )
        return self

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

    def named_models(self, roles: dict[str, list[str]]) -> dict[str, list[str]]:  # noqa: ARG002
        named = {"options.evaluate.models": list(self.models)}
        for field in ("judge", "base_llm"):
            if value := getattr(self, field):
                named[f"options.evaluate.{field}"] = [value]
        return named

    def resolved(self, fix: Fix, base: Path) -> Self:  # noqa: ARG002
        update = {
            name: fix(value)
            for name in ("dataset", "items", "human_grades")
            if (value := getattr(self, name)) is not None and not is_fixed(value)
        }
        return self.model_copy(update=update) if update else self
