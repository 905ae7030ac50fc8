"""The generate stage's options (the spec's `options.generate`)."""

from __future__ import annotations

from pydantic import Field, model_validator

from benchfoundry.core.options import StageOptionsModel


class GenerateOptions(StageOptionsModel):
    """Options of the generate stage."""

    templates: bool = Field(default=True, description="write template questions from the facts")
    llm: bool = Field(
        default=True, description="ask the spec's generator models, when there are any"
    )
    llm_dimensions: list[str] | None = Field(
        default=None, description="dimensions for the LLM (default: every leaf)"
    )
    min_options: int = Field(
        default=2, ge=2, le=10, description="a question with fewer options is refused"
    )
    max_options: int = Field(
        default=4, ge=2, le=10, description="a question with more options is refused"
    )
    n_options: int = Field(default=4, ge=2, le=10, description="options an LLM is asked for")
    length_ratio: float = Field(
        default=3.0, gt=1, description="an option this many times longer than the others is flagged"
    )
    near_duplicate: float = Field(
        default=0.95,
        gt=0,
        le=1,
        description="text similarity above which two questions are duplicates",
    )
    seed: int = Field(default=0, description="seed of the templates' option draws (and so of ids)")
    context_max_chars: int = Field(
        default=2000, ge=200, description="the most characters of facts an LLM generator is shown"
    )

    @model_validator(mode="after")
    def _option_counts_fit(self) -> GenerateOptions:
        if not self.min_options <= self.n_options <= self.max_options:
            raise ValueError(
                f"need min_options <= n_options <= max_options, got {self.min_options}, {self.n_options}, {self.max_options}"
            )
        return self

    def named_models(self, roles: dict[str, list[str]]) -> dict[str, list[str]]:
        """With `llm` on, each generator role's first model (the one the stage asks)."""
        if not self.llm:
            return {}
        return {
            f"models.{role}": roles[role][:1]
            for role in ("generator", "generator_reasoning")
            if roles.get(role)
        }

    def named_dimensions(self) -> dict[str, list[str]]:
        return {"options.generate.llm_dimensions": list(self.llm_dimensions or [])}
