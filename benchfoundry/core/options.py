"""The base of every section of a build spec: declarative, validated, unknown keys refused.
A stage's options model (its section under the spec's `options`, named as the stage) derives
from `StageOptionsModel`, which lets it resolve its own relative paths against the spec's
folder, name the taxonomy dimensions it refers to, and name the models and weights it will
load (for the preflight), so that neither the spec nor the pipeline needs a line per stage.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Self

from pydantic import BaseModel, ConfigDict

Fix = Callable[[Path | str], Path | str]  # makes a relative path absolute; URLs and absolutes kept


class SpecModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StageOptionsModel(SpecModel):
    """One stage's options."""

    def resolved(self, fix: Fix, base: Path) -> Self:  # noqa: ARG002
        """A copy whose relative paths are made absolute with `fix` (the spec's folder is
        `base`); options without paths are returned as they are."""
        return self

    def named_dimensions(self) -> dict[str, list[str]]:
        """The taxonomy dimensions these options name, by the spec key that names them, so that
        the spec can check each is a dimension of its taxonomy."""
        return {}

    def named_models(self, roles: dict[str, list[str]]) -> dict[str, list[str]]:
        """The models the stage will call when it runs, by where they are named (`models.ROLE`
        for the spec's roles in `roles`, `options.STAGE.FIELD`), so that the preflight can
        check each before any stage runs."""
        return {}

    def reads(self) -> dict[str, tuple[str, str]]:
        """Tables these options make the stage read beyond its own inputs, by the option that
        does: option key -> (table, the stage that writes it); the preflight checks that an
        earlier stage of the build writes it or the run folder has it."""
        return {}

    def named_weights(self) -> dict[str, str]:
        """The local weights (folders, files, or hub ids) the stage will load, by the key that
        names them."""
        return {}
