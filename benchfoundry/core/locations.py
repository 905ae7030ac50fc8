"""Where data lives: a local path, or a URL of an object store (`s3://bucket/prefix`). Told
apart here, once, for the spec, the storage layer and every stage."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated

from pydantic import PlainValidator

URL_PATTERN = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://")


def is_url(value: object) -> bool:
    """True for `scheme://...` locations other than `file://` (which is a local path)."""
    if not isinstance(value, str):
        return False
    match = URL_PATTERN.match(value)
    return bool(match) and match.group("scheme").lower() not in ("file", "local")


def local_path(value: str | os.PathLike[str]) -> Path:
    """A location that is not a URL, as a path (`file://` taken off)."""
    text = os.fspath(value)
    return Path(text[len("file://") :] if text.startswith("file://") else text)


def _location(value: object) -> Path | str:
    """A URL of an object store stays text (a `Path` would fold its `//`); anything else is a
    path."""
    if is_url(value):
        return value  # type: ignore[return-value]
    if isinstance(value, str | os.PathLike):
        return Path(value)
    raise ValueError(f"expected a path or a URL, got {type(value).__name__}")


# A local path (relative ones against the spec's folder) or a URL such as s3://bucket/prefix.
Location = Annotated[Path | str, PlainValidator(_location, json_schema_input_type=str)]


def is_fixed(value: Path | str) -> bool:
    """A location that needs no resolving: a URL, or an absolute path."""
    return isinstance(value, str) or value.is_absolute()
