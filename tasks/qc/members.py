"""Who quality control asks, in which role: the text-only step's configured models, artefact
and chance baselines, and the vision-language ensemble; models named by their masked form, so
that no credential reaches a table or a report."""

from __future__ import annotations

from collections.abc import Sequence

from benchfoundry.core.errors import UserError
from benchfoundry.gateway.models import protect, protect_models
from benchfoundry.gateway.roles import role_problem
from benchfoundry.tasks.qc.options import DEFAULT_TEXT_ONLY, DEFAULT_VLM, FilterOptions


class QCConfigError(UserError, ValueError):
    """Quality control cannot run as configured (a model in the wrong role, nothing to ask)."""


def text_members(options: FilterOptions, models: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(model, role) of the text-only step: configured LLMs, artefact baselines, chance baselines.
    Models are named by their masked form: no credential reaches a table or a report."""
    models = protect_models(_no_empty_roles(models))
    members: list[tuple[str, str]] = []
    for role, names in (
        ("text_only", models.get("text_only") or list(DEFAULT_TEXT_ONLY)),
        ("blind", [protect(m) for m in options.blind]),
        ("chance", [protect(m) for m in options.chance]),
    ):
        members += [(m, role) for m in names if m not in {n for n, _ in members}]
    return members


def _no_empty_roles(models: dict[str, list[str]]) -> dict[str, list[str]]:
    if problem := role_problem(models):
        raise QCConfigError(problem)
    return models


def vlm_members(models: dict[str, list[str]]) -> list[tuple[str, str]]:
    names = protect_models(_no_empty_roles(models)).get("vlm") or list(DEFAULT_VLM)
    return [(m, "vlm") for m in dict.fromkeys(names)]


def counted(members: Sequence[tuple[str, str]]) -> list[str]:
    """The models whose hits count (chance baselines are reported, never counted)."""
    return [m for m, role in members if role != "chance"]
