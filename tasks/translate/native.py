"""Twins written from an item's parts, with no model: a template question's kind and slots
(`generator` `template:<kind>`, `slots`, `option_slots`), or a seed question whose source gave
them as columns (`meta`: `template_kind`, `template_slots`, `template_option_slots`, JSON; the
synthetic scenes' reference questions do). The language's grammar (`benchfoundry.meaning`) writes the
twin; an item with no parts, or with a part outside the language's vocabulary (an annotation
label it does not know), has no native twin and goes to the translator model."""

from __future__ import annotations

import json
from dataclasses import dataclass

from benchfoundry import meaning
from benchfoundry.core.records import CandidateRecord

SEED_COLUMNS = ("template_kind", "template_slots", "template_option_slots")


@dataclass(frozen=True)
class Parts:
    """An item's kind and parts: the question's slots and each option's, in its order."""

    kind: str
    slots: dict[str, str]
    option_slots: list[dict[str, str]]

    def kept(self, options: list[str]) -> list[str]:
        """The options that stay as printed in every language (text read off the image)."""
        return [o for o, s in zip(options, self.option_slots, strict=True) if "text" in s]


def _strings(value: object) -> bool:
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


def _seed_parts(meta: dict[str, str]) -> Parts | None:
    if not all(meta.get(column) for column in SEED_COLUMNS):
        return None
    try:
        slots = json.loads(meta["template_slots"])
        option_slots = json.loads(meta["template_option_slots"])
    except json.JSONDecodeError:
        return None
    if not _strings(slots) or not isinstance(option_slots, list):
        return None
    if not all(_strings(o) for o in option_slots):
        return None
    return Parts(meta["template_kind"], slots, option_slots)


def parts(candidate: CandidateRecord) -> Parts | None:
    """The item's parts, when all of its text was written from them (not an item whose
    distractors a model wrote, `template:<kind>+llm:...`, nor one with a hint), else None."""
    if candidate.hint:
        return None
    if candidate.generator.startswith("seed:"):
        found = _seed_parts(candidate.meta)
    else:
        kind = candidate.generator.removeprefix("template:")
        if kind == candidate.generator or "+" in kind:
            return None
        found = Parts(kind, dict(candidate.slots), [dict(o) for o in candidate.option_slots])
    if found is None or len(found.option_slots) != len(candidate.options):
        return None
    # Parts that do not write the item's own English are not its parts: no twin from them.
    english = meaning.written(found.kind, found.slots, found.option_slots, "en")
    return found if english == (candidate.question, list(candidate.options)) else None


def twin(candidate: CandidateRecord, language: str) -> tuple[str, list[str]] | None:
    """The item's question and options in `language`, in the same order (so the key letter is
    the English one), or None when it has no native form there."""
    found = parts(candidate)
    if found is None:
        return None
    return meaning.written(found.kind, found.slots, found.option_slots, language)
