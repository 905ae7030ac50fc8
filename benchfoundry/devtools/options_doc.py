"""The reference of every stage's options (the spec's `options.STAGE` sections), made from the
options models themselves so that it cannot drift from them: `docs/options.md` is this text,
and a test keeps it so (`python -m benchfoundry.devtools.options_doc > docs/options.md`)."""

from __future__ import annotations

import inspect
import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from benchfoundry.pipeline.registry import STAGES


def _type(annotation: Any) -> str:
    """A type as a reader wants it: `int`, `list[str]`, `str | None`, `path or URL`."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:  # a validated alias: a location is a path or a URL
        inner = _type(args[0])
        return "path or URL" if inner in ("Path | str", "str | Path") else inner
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type(a) for a in args)
    if origin is typing.Literal:
        return " or ".join(repr(a) for a in args)
    if origin is not None:
        return f"{getattr(origin, '__name__', str(origin))}[{', '.join(_type(a) for a in args)}]"
    if annotation is type(None):
        return "None"
    return getattr(annotation, "__name__", str(annotation))


def _default(field: Any) -> str:
    if field.default is PydanticUndefined:
        if field.default_factory is None:
            return "required"
        value = field.default_factory()
    else:
        value = field.default
    if isinstance(value, BaseModel):
        return "(see below)"
    text = repr(value.value if hasattr(value, "value") else value)
    return text if len(text) <= 40 else text[:37] + "..."


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def section(model: type[BaseModel], title: str) -> list[str]:
    """One options model as a Markdown table (and its nested models after it)."""
    doc = inspect.getdoc(model) or ""
    lines = [f"### `{title}`", "", _cell(doc), "", "| key | type | default | what it does |"]
    lines.append("|---|---|---|---|")
    nested = []
    for name, field in model.model_fields.items():
        lines.append(
            f"| `{name}` | {_cell(_type(field.annotation))} | `{_cell(_default(field))}` | "
            f"{_cell(field.description or '')} |"
        )
        inner = [
            a
            for a in (field.annotation, *typing.get_args(field.annotation))
            if isinstance(a, type) and issubclass(a, BaseModel)
        ]
        nested += [(f"{title}.{name}", m) for m in inner]
    lines.append("")
    for path, inner_model in nested:
        lines += section(inner_model, path)
    return lines


def render() -> str:
    """The whole reference, stage by stage in registry order."""
    lines = [
        "# Stage options",
        "",
        "Every stage reads its section of the build spec, `options.STAGE` (below, in the order a",
        "build runs them). A key not listed here is refused with the keys its section accepts and",
        "the one it was probably meant to be. This page is made from the options models",
        "(`python -m benchfoundry.devtools.options_doc > docs/options.md`); a test keeps it so.",
        "",
    ]
    for name, stage in STAGES.items():
        lines += [f"## {name}", "", _cell(stage.does), ""]
        lines += section(stage.options_type(), f"options.{name}")
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    print(render(), end="")
