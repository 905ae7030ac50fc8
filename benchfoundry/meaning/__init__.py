"""What each template question means, declared once per kind (`kinds.KINDS`): its parts
(`slots`), its text in every language, and how a scene answers it. The generator writes its keys
from the facts through it, the evidence reader and the bench's truth judge keys with it, the
translation writes twins with it; nothing reads a question's text back into parts.

`question(kind, slots, language)` and `option(kind, option_slots, language)` write one text; a
part a language has no word for (an annotation label outside the Chinese vocabulary) raises
`NoForm`, and the item is then translated by a model instead. `answer(kind, scene, slots)` is
what the right option says; `fits(kind, read, option)` whether an option says it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from benchfoundry.meaning import en, zh
from benchfoundry.meaning.answers import Read
from benchfoundry.meaning.kinds import KINDS, Kind
from benchfoundry.meaning.parts import NoForm
from benchfoundry.meaning.scene import (
    HINT_NOUNS,
    SIDES,
    NoAnswer,
    Scene,
    Step,
    StepsScene,
    Thing,
    Unsure,
    covered,
)

__all__ = [
    "HINT_NOUNS", "KINDS", "LANGUAGES", "SIDES", "Kind", "NoAnswer", "NoForm", "Read", "Scene",
    "Step", "StepsScene", "Thing", "Unsure", "answer", "covered", "fits", "kind", "option",
    "question", "written",
]  # fmt: skip

LANGUAGES = ("en", "zh")
OPTIONS = {"en": en.option, "zh": zh.option}


def kind(name: str) -> Kind:
    try:
        return KINDS[name]
    except KeyError:
        raise NoForm(f"no template kind {name!r}") from None


def question(kind_name: str, slots: Mapping[str, str], language: str) -> str:
    """The question of a template kind with these parts, in `language`."""
    entry = kind(kind_name)
    if language not in LANGUAGES:
        raise NoForm(f"no template grammar for language {language!r}")
    return entry.en(slots) if language == "en" else entry.zh(slots)


def option(kind_name: str, option_slots: Mapping[str, str], language: str) -> str:
    """One option of a template kind, from what that option is, in `language`."""
    kind(kind_name)
    try:
        write = OPTIONS[language]
    except KeyError:
        raise NoForm(f"no template grammar for language {language!r}") from None
    return write(option_slots)


def written(
    kind_name: str,
    slots: Mapping[str, str],
    option_slots: Sequence[Mapping[str, str]],
    language: str,
) -> tuple[str, list[str]] | None:
    """The question and its options in `language`, in the options' order; None when a part has
    no form in it (or the item has no parts for an option)."""
    if not option_slots or any(not o for o in option_slots):
        return None
    try:
        return question(kind_name, slots, language), [
            option(kind_name, o, language) for o in option_slots
        ]
    except NoForm:
        return None


def answer(kind_name: str, scene: Scene, slots: Mapping[str, str]) -> Read:
    """What the right option says, as this scene reads it (NoAnswer: none single; Unsure: the
    scene cannot tell)."""
    return kind(kind_name).answer(scene, slots)


def fits(kind_name: str, read: Read, option_slots: Mapping[str, str]) -> bool | None:
    """Whether an option says what was read; None where they share no part to compare."""
    return kind(kind_name).fits(read, option_slots)
