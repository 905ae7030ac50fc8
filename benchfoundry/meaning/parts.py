"""What the languages' grammars share: the failure a missing word raises, and the slots that
hold a list (JSON text, since every slot is a string)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence


class NoForm(LookupError):
    """A part has no form in the language asked for (a label outside its vocabulary), or the
    kind is not one the grammar writes: the item is translated by a model instead."""


def slot(slots: Mapping[str, str], key: str) -> str:
    """A slot the kind needs; NoForm when it is missing."""
    try:
        return slots[key]
    except KeyError:
        raise NoForm(f"no {key!r} slot in {dict(slots)}") from None


def listed(values: Sequence[str]) -> str:
    """A list as one slot's text."""
    return json.dumps(list(values), ensure_ascii=False)


def _loaded(text: str) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise NoForm(f"not JSON: {text[:80]!r}") from None


def unlisted(text: str) -> list[str]:
    """A list slot's values."""
    values = _loaded(text)
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise NoForm(f"not a list of strings: {text[:80]!r}")
    return values


def listed_steps(actions: Sequence[Mapping[str, str]]) -> str:
    """Actions (one action's slots each) as one slot's text."""
    return json.dumps([dict(a) for a in actions], ensure_ascii=False)


def steps(text: str) -> list[dict[str, str]]:
    """An `actions` slot's steps: one action's slots each."""
    values = _loaded(text)
    if not isinstance(values, list) or not all(
        isinstance(v, dict) and all(isinstance(x, str) for x in v.values()) for v in values
    ):
        raise NoForm(f"not a list of actions: {text[:80]!r}")
    return values
