"""Photos that installed Python packages ship inside their folders, read at run time.

Nothing is downloaded and nothing is copied into the repository: each photo is read from its
package's own data folder, with the package name and version kept as provenance.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from dataclasses import dataclass
from pathlib import Path

from benchfoundry.core.errors import UserError
from benchfoundry.core.imaging import IMAGE_SUFFIXES


@dataclass(frozen=True)
class PackagedPhoto:
    package: str
    name: str
    path: Path
    license: str | None

    @property
    def source(self) -> str:
        return f"packaged:{self.package}/{self.name}"


# package name -> (module whose folder holds the data, sub-folder, files or None for every image,
# license note taken from the package's own data README where it states one)
_CATALOGUE: dict[str, tuple[str, str, tuple[str, ...] | None, dict[str, str]]] = {
    "scikit-image": ("skimage.data", ".", None, {}),
    "scikit-learn": (
        "sklearn.datasets",
        "images",
        None,
        {"china.jpg": "CC BY 2.0", "flower.jpg": "CC BY 2.0"},
    ),
    "matplotlib": (
        "matplotlib",
        "mpl-data/sample_data",
        ("grace_hopper.jpg", "Minduka_Present_Blue_Pack.png", "logo2.png"),
        {},
    ),
}
PACKAGES: tuple[str, ...] = tuple(_CATALOGUE)


class PackageMissingError(UserError, RuntimeError):
    """A packaged source names a package that is not installed."""


def package_version(package: str) -> str:
    return importlib.metadata.version(package)


def photos(package: str) -> list[PackagedPhoto]:
    """The photos one package ships, in name order."""
    module_name, sub, files, licenses = _CATALOGUE[package]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise PackageMissingError(
            f"packaged source '{package}' needs the package installed (pip install {package}): {exc}"
        ) from None
    folder = (Path(module.__file__).parent / sub).resolve()
    if files is None:
        paths = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    else:
        paths = [folder / f for f in files]
    return [PackagedPhoto(package, p.name, p, licenses.get(p.name)) for p in paths]
