"""Who built a release: the models its manifest and rows name as generators, text-only filters
(the spec's `text_only` models and the blind baselines whose hits were counted; the chance
baselines, only reported, are not), the vision-language ensemble, judges and reviewers. An
evaluated model that had one of those roles is marked `in_build`: quality control kept what the
build's models got right or could not solve, so such a model's score on the release is biased,
and each role says which way (`BIAS`): a generator wrote questions it can answer, the
vision-language ensemble kept what it answered (what no reader answered was flagged as possibly
flawed), a reviewer accepted what it judged right: upward; a text-only filter removed what it
solved without the image: downward; a judge only read other models' answers: unclear.
Roles are the spec's keys (`text_only`, `vlm`, `generator`, `judge`, `reviewer`) in JSON and
Parquet, and phrases (`LABELS`) in text, Markdown and HTML.

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
TEXT_ONLY = "text_only"
VLM = "vlm"
JUDGE = "judge"
REVIEWER = "reviewer"
ROLES = (GENERATOR, TEXT_ONLY, VLM, JUDGE, REVIEWER)
LABELS = {
    GENERATOR: "generator",
    TEXT_ONLY: "text-only filter",
    VLM: "vision-language ensemble",
    JUDGE: "judge",
    REVIEWER: "reviewer",
}
UPWARD, DOWNWARD, UNCLEAR = "upward", "downward", "unclear"
BIAS = {GENERATOR: UPWARD, TEXT_ONLY: DOWNWARD, VLM: UPWARD, JUDGE: UNCLEAR, REVIEWER: UPWARD}
WHY = {  # what the role did to the items, and so to the score of the model that held it
    GENERATOR: "wrote questions it can answer",
    TEXT_ONLY: "removed the questions it answered without the image",
    VLM: "kept the questions it answered (what no reader answered was flagged as possibly flawed)",
    JUDGE: "read the answers of the models that kept the questions",
    REVIEWER: "accepted the questions it judged right",
}
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


class InBuild(BaseModel):
    """One role a model (or a model of its family) had in building the dataset, and which way
    it biases the model's score there."""

    role: str  # the spec's role key: generator, text_only, vlm, judge, reviewer
    family: str | None = None  # held by another model of this family, not by the model itself
    bias: str  # upward, downward or unclear

    def label(self) -> str:
        """The role as a phrase: `text-only filter`, `generator (same family: qwen)`."""
        own = LABELS.get(self.role, self.role)
        return f"{own}{SAME_FAMILY}{self.family})" if self.family else own


def labels(roles: Sequence[InBuild]) -> str:
    """The roles as phrases, for text, Markdown and HTML ("-" for none)."""
    return ", ".join(r.label() for r in roles) or "-"


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
) -> list[InBuild]:
    """The roles `model` had in the build (empty: none): its own, and those held by a model of
    its family (`generator`, family `qwen`)."""
    families = families or {}
    mine = identity(model, catalogue)
    kin = families_of(model, families, catalogue)

    def same(other: str) -> bool:
        return other == model or identity(other, catalogue) == mine

    out = []
    for role, names in built.roles.items():
        if any(same(n) for n in names):
            out.append(InBuild(role=role, bias=BIAS.get(role, UNCLEAR)))
            continue
        theirs = (
            set().union(*(families_of(n, families, catalogue) for n in names)) if kin else set()
        )
        if shared := sorted(kin & theirs):
            out.append(InBuild(role=role, family=", ".join(shared), bias=BIAS.get(role, UNCLEAR)))
    return out


def mark(
    models: Iterable[str],
    built: BuildRoles,
    catalogue: dict[str, Any],
    families: Families | None = None,
) -> dict[str, list[InBuild]]:
    """model -> its roles in the build, for every model."""
    return {m: roles_of(m, built, catalogue, families) for m in models}


def direction(roles: Sequence[InBuild]) -> str:
    """Which way the roles together bias a score: upward, downward, or unclear (none known, or
    roles pulling both ways)."""
    known = {r.bias for r in roles} - {UNCLEAR}
    return known.pop() if len(known) == 1 else UNCLEAR


def biased_sentence(model: str, roles: Sequence[InBuild], dataset: str) -> str:
    """The plain warning shown beside a model that helped build the dataset, or whose family
    did: each role with what it did, then which way the score is biased."""
    own = [r for r in roles if not r.family]
    kin = [r for r in roles if r.family]
    parts = []
    if own:
        did = "; ".join(f"{LABELS.get(r.role, r.role)}: {WHY.get(r.role, 'a role')}" for r in own)
        parts.append(f"{model} took part in building {dataset} ({did})")
    if kin:
        held = "; ".join(
            f"{LABELS.get(r.role, r.role)}, family {r.family}: a relative of it held this role"
            for r in kin
        )
        lead = f"{model} is of the family of models that built {dataset}"
        parts.append(f"{lead} ({held})" if not own else f"it is of that family too ({held})")
    way = direction(roles)
    if way == UNCLEAR:
        tail = (
            "its score on it is biased, in no direction we can tell (its roles pull both ways, "
            "or the role's effect is unknown)"
        )
    else:
        tail = f"its score on it is biased {way}"
    return f"{'; '.join(parts)}: {tail}."
