"""Prompt templates (`*.j2` files in this folder, shipped as package data), versioned by
content hash.

Rendering is strict: a placeholder the caller does not fill is an error, and so is a value the
template does not use. Every rendered prompt carries the template's id and hash so outputs can
record which prompt made them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import jinja2
import jinja2.meta

from benchfoundry.core.errors import UserError
from benchfoundry.core.ids import sha256_hex

PROMPTS = Path(str(files(__name__)))  # package data: found in a wheel too


class PromptError(UserError, ValueError):
    """A template that is missing, or rendered with missing or unknown placeholders."""


@dataclass(frozen=True)
class Template:
    name: str
    text: str

    @property
    def version(self) -> str:
        return sha256_hex(self.text.encode("utf-8"))[:12]

    @property
    def prompt_id(self) -> str:
        """`name@hash`, what outputs record."""
        return f"{self.name}@{self.version}"

    @property
    def placeholders(self) -> set[str]:
        return set(_placeholders(self.text))

    def render(self, **values: Any) -> str:
        placeholders = _placeholders(self.text)
        missing = placeholders - set(values)
        unknown = set(values) - placeholders
        if missing or unknown:
            raise PromptError(
                f"prompt '{self.name}': missing {sorted(missing) or 'nothing'}, unknown {sorted(unknown) or 'nothing'}"
            )
        return _compiled(self.text).render(**values).strip()


# A template's text parsed and compiled once per process: compiling it for every render cost
# about 7 ms a prompt, most of an evaluation's own time per call.
@lru_cache(maxsize=256)
def _placeholders(text: str) -> frozenset[str]:
    environment = jinja2.Environment()
    return frozenset(jinja2.meta.find_undeclared_variables(environment.parse(text)))


@lru_cache(maxsize=256)
def _compiled(text: str) -> jinja2.Template:
    environment = jinja2.Environment(
        undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False
    )
    return environment.from_string(text)


@lru_cache(maxsize=64)
def load(name: str, folder: Path = PROMPTS) -> Template:
    """The template `folder/name.j2`."""
    path = folder / f"{name}.j2"
    try:
        return Template(name, path.read_text(encoding="utf-8"))
    except OSError:
        raise PromptError(f"no prompt template {path}") from None


def load_for(name: str, language: str, folder: Path = PROMPTS) -> Template:
    """The template of `name` in `language` (`name_zh.j2` for Chinese), or `name.j2` for
    English and for a language that has no form of its own."""
    if language != "en" and (folder / f"{name}_{language}.j2").is_file():
        return load(f"{name}_{language}", folder)
    return load(name, folder)
