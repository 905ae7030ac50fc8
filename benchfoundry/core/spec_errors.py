"""Validation errors of a spec, said so that a user can act on them: a misspelt key names the
key it was probably meant to be and every key its section accepts."""

from __future__ import annotations

import difflib
import typing
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

Resolver = Callable[[type[BaseModel], str], type[BaseModel] | None]


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation holds (through lists, unions and `Annotated`)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def _tag(model: type[BaseModel]) -> str | None:
    """The value of a tagged union member's `kind`, when it has one."""
    field = model.model_fields.get("kind")
    return str(field.default) if field is not None and isinstance(field.default, str) else None


def section_at(
    root: type[BaseModel], loc: Sequence[str | int], resolve: Resolver | None = None
) -> type[BaseModel] | None:
    """The model of the section that holds the last key of `loc` (None if it cannot be told).
    `resolve(model, field)` may name the model of a field whose annotation does not (a section
    assembled at run time)."""
    candidates: list[type[BaseModel]] = [root]
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        tagged = [m for m in candidates if _tag(m) == part]
        if tagged and len(candidates) > 1:
            candidates = tagged
            continue
        found: list[type[BaseModel]] = []
        for model in candidates:
            chosen = resolve(model, part) if resolve else None
            if chosen is not None:
                found.append(chosen)
            elif part in model.model_fields:
                found += _models_in(model.model_fields[part].annotation)
        if not found:
            return None
        candidates = found
    return candidates[0] if len(candidates) == 1 else None


def problem(root: type[BaseModel], error: dict[str, Any], resolve: Resolver | None = None) -> str:
    """One validation error as a sentence: where, what; for an unknown key, the key it was
    probably meant to be and the keys its section accepts."""
    loc = [p for p in error["loc"]]
    where = ".".join(str(p) for p in loc)
    if error.get("type") != "extra_forbidden" or not loc:
        return f"{where}: {error['msg']}"
    section = section_at(root, loc, resolve)
    if section is None:
        return f"{where}: unknown key"
    keys = list(section.model_fields)
    close = difflib.get_close_matches(str(loc[-1]), keys, n=1, cutoff=0.6)
    guess = f"; did you mean `{close[0]}`?" if close else ""
    place = ".".join(str(p) for p in loc[:-1]) or "the top level"
    return f"{where}: unknown key{guess} The keys of {place}: {', '.join(keys)}"
