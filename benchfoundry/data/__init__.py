"""Data that ships inside the package, found with `importlib.resources` (so an installed wheel
has it too): the built-in taxonomies (`taxonomies/*.yaml`), the default model catalogue
(`models.yaml`) and the demo corpus (`demo/`: synthetic scenes with ground truth and reference
questions, and deliberately broken inputs)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def data_path(*parts: str) -> Path:
    """A file or folder of the package's data, as a path on disk."""
    return Path(str(files(__name__).joinpath(*parts)))
