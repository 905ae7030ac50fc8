"""Who built a release: the models its manifest and rows name as generators, text-only filters
(the spec's `text_only` models and the blind baselines whose hits were counted; the chance
baselines, only reported, are not), the vision-language ensemble, judges and reviewers. An
evaluated model that had one of those roles is marked `in_build`: quality control kept what the
build's models got right or could not solve, so such a model's score on the release is biased
upward (LLM-written benchmarks favour the family that wrote them).

Models are the same when their masked names are, or when both resolve (through the model
catalogue) to the same provider and model id, so `facts-smollm2` is `facts/smollm2` and
`blind-longest` is `blind/longest`; the endpoint is not part of the identity. A fact reader's
parts of the facts are (`options.parts`): a reader of the objects alone is another model than
the reader of them all, though both are of one family.

Model families (`options.evaluate.families`: a name -> glob patterns) mark a model of a
builder's family too, its role said to be by family (`generator (same family: qwen)`). A
pattern is matched (fnmatch, case-insensitive) against a model's name, that name without its
endpoint, its model id and `provider/model id`. The blind baselines belong to no family: a
chance baseline is never marked by one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from pydantic import BaseModel

from benchfoundry.core.errors import UserError
from benchfoundry.gateway.roles import DEFAULT_MODELS

GENERATOR = "generator"
TEXT_ONLY = "text-only filter"
VLM = "vision-language ensemble"
JUDGE = "judge"
REVIEWER = "reviewer"
ROLES = (GENERATOR, TEXT_ONLY, VLM, JUDGE, REVIEWER)
SPEC_ROLES = {  # the spec's model roles -> the part they play in a build
    "generator": GENERATOR,
    "generator_reasoning": GENERATOR,
    "text_only": TEXT_ONLY,
    "vlm": VLM,
    "judge": JUDGE,
}
AUTO_REVIEWER = "auto"  # the automatic reviewer: rules, not a model
SAME_FAMILY = " (same family: "  # a role held by a model of the same family, not the model
NO_FAMILY = ("blind",)  # providers whose models belong to no family (the blind baselines)
Families = Mapping[str, Sequence[str]]  # family name -> glob patterns


class BuildRoles(BaseModel):
    """The models that built a release, by role, and what the manifest leaves unsaid."""

    roles: dict[str, list[str]] = {}  # role -> models (masked names), in ROLES order
    notes: list[str] = []


def _ran(spec: dict[str, Any], stage: str) -> bool:
    stages = spec.get("stages")
    return stages is None or stage in stages


def build_roles(version_dir: str | Path) -> BuildRoles:
    """The roles a release's manifest (its build spec) and rows (each question's generator and
    reviewers) name."""
    from benchfoundry.storage.releases import data_files, read_manifest

    folder = Path(version_dir)
    spec = read_manifest(folder).get("spec") or {}
    models: dict[str, list[str]] = spec.get("models") or {}
    found: dict[str, list[str]] = {role: [] for role in ROLES}
    for role, names in models.items():
        if role in SPEC_ROLES:
            found[SPEC_ROLES[role]] += names
    filtering = ((spec.get("options") or {}).get("filter") or {}) if _ran(spec, "filter") else {}
    found[TEXT_ONLY] += filtering.get("blind") or []  # counted; `chance` ones only reported
    for path in data_files(folder):
        names = pq.read_schema(path).names
        columns = [c for c in ("meta_info", "reviewers") if c in names]
        for row in pq.read_table(path, columns=columns).to_pylist():
            generator = (row.get("meta_info") or {}).get("generator") or ""
            if generator.startswith("llm:"):
                found[GENERATOR].append(generator.removeprefix("llm:"))
            found[REVIEWER] += [r for r in row.get("reviewers") or [] if r != AUTO_REVIEWER]
    for role, part, stage in (("text_only", TEXT_ONLY, "filter"), ("vlm", VLM, "consensus")):
        if spec and _ran(spec, stage) and not models.get(role):  # the role's default model ran
            found[part] += DEFAULT_MODELS[role]
    return BuildRoles(
        roles={role: list(dict.fromkeys(found[role])) for role in ROLES if found[role]}
    )


def identity(name: str, catalogue: dict[str, Any]) -> tuple[str, str, tuple[str, ...]]:
    """(provider, model id, the parts of the facts it reads) of a model name, resolved through
    the catalogue; the name itself when it does not resolve. Only a fact reader reads parts."""
    from benchfoundry.gateway.facts import parts_of
    from benchfoundry.gateway.models import resolve

    try:
        spec = resolve(name, catalogue)
        parts = parts_of(spec) if spec.provider == "facts" else ()
    except (UserError, ValueError):
        return ("", name, ())
    return (spec.provider, spec.model or spec.name, parts)


def families_of(name: str, families: Families, catalogue: dict[str, Any]) -> set[str]:
    """The families whose patterns match the model `name` (none for a blind baseline)."""
    if not families:
        return set()
    provider, model_id, _ = identity(name, catalogue)
    if provider in NO_FAMILY:
        return set()
    forms = {name, name.split("@", 1)[0], model_id, f"{provider}/{model_id}" if provider else ""}
    forms = {f.lower() for f in forms if f}
    return {
        family
        for family, patterns in families.items()
        if any(fnmatchcase(f, p.lower()) for f in forms for p in patterns)
    }


def roles_of(
    model: str, built: BuildRoles, catalogue: dict[str, Any], families: Families | None = None
) -> list[str]:
    """The roles `model` had in the build (empty: none): its own, and those held by a model of
    its family (`generator (same family: qwen)`)."""
    families = families or {}
    mine = identity(model, catalogue)
    kin = families_of(model, families, catalogue)

    def same(other: str) -> bool:
        return other == model or identity(other, catalogue) == mine

    out = []
    for role, names in built.roles.items():
        if any(same(n) for n in names):
            out.append(role)
            continue
        theirs = (
            set().union(*(families_of(n, families, catalogue) for n in names)) if kin else set()
        )
        if shared := sorted(kin & theirs):
            out.append(f"{role}{SAME_FAMILY}{', '.join(shared)})")
    return out


def mark(
    models: Iterable[str],
    built: BuildRoles,
    catalogue: dict[str, Any],
    families: Families | None = None,
) -> dict[str, list[str]]:
    """model -> its roles in the build, for every model."""
    return {m: roles_of(m, built, catalogue, families) for m in models}


def biased_sentence(model: str, roles: list[str], dataset: str) -> str:
    """The plain warning shown beside a model that helped build the dataset, or whose family
    did."""
    if all(SAME_FAMILY in r for r in roles):
        return (
            f"{model} is of the family of models that built {dataset} ({', '.join(roles)}): "
            "its score on it is biased upward (benchmarks written and kept by a family of "
            "models favour that family)."
        )
    return (
        f"{model} took part in building {dataset} ({', '.join(roles)}): its score on it is "
        "biased upward (the questions were written, kept or checked by it)."
    )
