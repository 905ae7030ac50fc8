"""A template question's text in any language, written from its kind and its parts (`slots`):
the one place the template grammar lives, below every stage, so that the generate stage writes
the English from the same data the translate stage writes the Chinese from (and quality control
can read it), and no step reads prose back into parts.

`question(kind, slots, language)` and `option(kind, option_slots, language)` write one text;
a part that a language has no word for (an annotation label outside the Chinese vocabulary)
raises `NoForm`, and the item is then translated by a model instead. The slot keys are listed
per kind in docs/generate.md."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType

from benchfoundry.core.phrasing import en, zh
from benchfoundry.core.phrasing.parts import NoForm

__all__ = ["LANGUAGES", "NoForm", "option", "question", "written"]

LANGUAGES = {"en": en, "zh": zh}


def _language(language: str) -> ModuleType:
    try:
        return LANGUAGES[language]
    except KeyError:
        raise NoForm(f"no template grammar for language {language!r}") from None


def question(kind: str, slots: Mapping[str, str], language: str) -> str:
    """The question of a template `kind` with these parts, in `language`."""
    return _language(language).question(kind, slots)


def option(kind: str, option_slots: Mapping[str, str], language: str) -> str:
    """One option of a template `kind`, from what that option is, in `language`."""
    return _language(language).option(kind, option_slots)


def written(
    kind: str,
    slots: Mapping[str, str],
    option_slots: Sequence[Mapping[str, str]],
    language: str,
) -> tuple[str, list[str]] | None:
    """The question and its options in `language`, in the options' order; None when a part has
    no form in it (or the item has no parts for an option)."""
    if not option_slots or any(not o for o in option_slots):
        return None
    try:
        return question(kind, slots, language), [option(kind, o, language) for o in option_slots]
    except NoForm:
        return None
