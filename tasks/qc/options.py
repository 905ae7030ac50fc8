"""The quality-control steps' options: filter (text-only ensemble), consensus (vision-language
ensemble) and select (hits, bins, the balanced selection)."""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import Field, field_validator

from benchfoundry.core.options import StageOptionsModel
from benchfoundry.gateway.roles import DEFAULT_MODELS

STEPS = ("filter", "consensus", "select")  # the `qc` command's steps, in order
DEFAULT_TEXT_ONLY = DEFAULT_MODELS["text_only"]
DEFAULT_VLM = DEFAULT_MODELS["vlm"]


def _role(roles: dict[str, list[str]], role: str, default: tuple[str, ...]) -> dict[str, list[str]]:
    """A role's models by where they come from: the spec's list, or the default."""
    if roles.get(role):
        return {f"models.{role}": list(roles[role])}
    return {f"models.{role} (default)": list(default)} if default else {}


class FilterOptions(StageOptionsModel):
    """Stage 1 of quality control: text-only models answer every candidate without its image.

    Models: the spec's `models.text_only` (default: the embedded `smollm2`) plus `blind`, the
    baselines that exploit option artefacts. `chance` baselines are asked and reported as the
    chance floor but never counted."""

    rules: list[Literal["seed", "mmbench", "mmstar"]] = Field(
        default_factory=lambda: ["seed", "mmbench", "mmstar"],
        description="seed: drop when every text-only model is right; mmbench: flag when more "
        "than half are right under CircularEval; mmstar: drop when more than max_hits are right",
    )
    blind: list[str] = Field(
        default_factory=lambda: ["blind/longest", "blind/similar"],
        description="blind baselines asked and counted as text-only hits (option artefacts)",
    )
    chance: list[str] = Field(
        default_factory=lambda: ["blind/random", "blind/letter-A", "blind/frequent"],
        description="blind baselines reported as the chance floor, never counted",
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

    def named_models(self, roles: dict[str, list[str]]) -> dict[str, list[str]]:
        return {
            **_role(roles, "text_only", DEFAULT_TEXT_ONLY),
            "options.filter.blind": list(self.blind),
            "options.filter.chance": list(self.chance),
            **_role(roles, "judge", ()),
        }

    def hit_limit(self, n_models: int) -> int:
        """MMStar's K for an ensemble of `n_models` (2 of 8 scales to round(0.25 * n))."""
        if self.max_hits is not None:
            return self.max_hits
        return int(self.max_hit_share * n_models + 0.5)


class ConsensusOptions(StageOptionsModel):
    """Stage 2: vision-language models (the spec's `models.vlm`, default the embedded
    fact-reading `facts-smollm2`) answer under CircularEval; hits give difficulty (MMStar), and a
    candidate no model gets right is flagged possibly flawed (MMBench). Candidates the text-only
    step dropped are not asked (MMStar shows its LVLMs only what the LLMs left)."""

    circular: bool = Field(default=True, description="ask under CircularEval")
    evidence: bool = Field(
        default=True,
        description="check template keys with the evidence reader (its own reading of the "
        "pixels): a key it reads otherwise is flagged possibly flawed, a vote beside the models' "
        "(one it confirms is still flagged where no model answers it)",
    )
    ask_dropped: bool = Field(
        default=False,
        description="also ask the candidates the text-only step's answers drop (their "
        "difficulty is then reported too); by default they are not asked, as they are never "
        "selected",
    )
    max_tokens: int = Field(default=16, ge=1, description="answer length asked of each model")
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

    def named_models(self, roles: dict[str, list[str]]) -> dict[str, list[str]]:
        return {**_role(roles, "vlm", DEFAULT_VLM), **_role(roles, "judge", ())}

    def difficulty(self, hits: int, n_models: int) -> str | None:
        """The bin of `hits` correct answers out of `n_models` (None with no models)."""
        if n_models == 0:
            return None
        names = list(self.bins)
        for name in names[:-1]:
            if hits < math.ceil(self.bins[name] * n_models - 1e-9):
                return name
        return names[-1]


class SelectOptions(StageOptionsModel):
    """Stage 3: a target per dimension, hardest first, answer letters balanced, a cap per image."""

    target: int = Field(default=250, ge=1, description="questions per dimension (MMStar: 250)")
    targets: dict[str, Annotated[int, Field(ge=1)]] = Field(
        default_factory=dict, description="per-dimension overrides (each at least 1)"
    )
    dimensions: list[str] | None = Field(
        default=None, description="core dimensions to fill (default: every one with candidates)"
    )
    max_per_image: int | None = Field(default=3, ge=1, description="selected questions per image")
    balance_letters: bool = Field(
        default=True, description="spread the answer letters evenly in the selection"
    )
    letter_slack: float = Field(
        default=0.0, ge=0, description="share above an even split one letter may take"
    )
    select_flagged: bool = Field(
        default=False,
        description="let flagged candidates be selected (they keep their flags for review)",
    )

    def target_for(self, dimension: str) -> int:
        return self.targets.get(dimension, self.target)

    def named_dimensions(self) -> dict[str, list[str]]:
        return {
            "options.select.targets": list(self.targets),
            "options.select.dimensions": list(self.dimensions or []),
        }
