"""Taxonomies as data: YAML files, loaded and validated. The built-in ones ship in the package
(`benchfoundry/data/taxonomies/`, named by file stem); a curator adds one by writing a file and
naming its path in the spec. A dimension with a `prompt` can be written by an LLM; one with
`templates` also by the template generator; `needs` says which visual facts its questions need."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from benchfoundry.core.errors import UserError
from benchfoundry.data import data_path

DEFAULT_TAXONOMY = "seed_bench"  # a build's taxonomy when its spec names none

TAXONOMIES = data_path("taxonomies")
FACTS = ("captions", "instances", "ocr_lines")
TemplateKind = Literal[
    "count",
    "read_text",
    "position",
    "colour",
    "size",
    "relative_position",
    "identity",
    "contain",
    "overlap",
    "touch",
    "compare_counts",
    "most_common_colour",
    "remove_and_count",
    "count_beside",
    "scene_content",
    "dominant_colour",
    "layout",
    "which_object",
    "action_label",
    "next_action",
    "action_order",
]
TEMPLATE_KINDS: tuple[str, ...] = get_args(TemplateKind)


class TaxonomyError(UserError, ValueError):
    """A taxonomy file that is missing or does not validate."""


class Dimension(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    name: str
    parent: str | None = None
    prompt: str | None = None
    role: Literal["generator", "generator_reasoning"] = "generator"
    needs: tuple[Literal["captions", "instances", "ocr_lines", "segments"], ...] = ()
    templates: tuple[TemplateKind, ...] = ()

    @property
    def leaf(self) -> bool:
        return self.prompt is not None or bool(self.templates)


class Taxonomy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    version: int
    description: str = ""
    dimensions: tuple[Dimension, ...]

    @model_validator(mode="after")
    def _consistent(self) -> Taxonomy:
        ids = [d.id for d in self.dimensions]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"dimension ids used twice: {repeated}")
        unknown = sorted({d.parent for d in self.dimensions if d.parent and d.parent not in ids})
        if unknown:
            raise ValueError(f"parents that are not dimensions: {unknown}")
        return self

    def get(self, dimension_id: str) -> Dimension:
        for dimension in self.dimensions:
            if dimension.id == dimension_id:
                return dimension
        raise KeyError(f"taxonomy '{self.name}' has no dimension '{dimension_id}'")

    def leaves(self) -> list[Dimension]:
        return [d for d in self.dimensions if d.leaf]

    def path(self, dimension_id: str) -> list[str]:
        """The dimension's ancestors and itself, root first (MMBench's L1 > L2 > L3)."""
        chain = [self.get(dimension_id)]
        while chain[0].parent:
            chain.insert(0, self.get(chain[0].parent))
        return [d.id for d in chain]


def load_taxonomy(name_or_path: str | Path) -> Taxonomy:
    """A taxonomy by name (a packaged one, benchfoundry/data/taxonomies) or by path."""
    path = Path(name_or_path)
    if not path.suffix:
        path = TAXONOMIES / f"{name_or_path}.yaml"
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError:
        known = ", ".join(sorted(p.stem for p in TAXONOMIES.glob("*.yaml")))
        raise TaxonomyError(f"no taxonomy {name_or_path} ({path}); known: {known}") from None
    try:
        return Taxonomy.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise TaxonomyError(f"taxonomy {path} is invalid: {problems}") from None
