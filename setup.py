"""Which packages the wheel holds. Everything installs under the one name `benchfoundry`: the
Prefect project's folders stay at the repository root, where a Prefect user looks for them, and
are mapped into it as subpackages (`tasks/` is `benchfoundry.tasks`), so that no other global
name is taken. Their subpackages are found here, so a new stage needs no line in this file.
The rest of the metadata is in pyproject.toml."""

from setuptools import find_namespace_packages, setup

MAPPED = ("flows", "tasks", "extractors", "validation", "prompts")

packages = find_namespace_packages(
    include=["benchfoundry", "benchfoundry.*"], exclude=["*.__pycache__"]
)
for folder in MAPPED:
    packages += [f"benchfoundry.{folder}"]
    # Every folder below counts (namespace packages too), so a stage package without an
    # `__init__.py` or a folder of package data is never silently left out of the wheel.
    found = find_namespace_packages(where=folder, exclude=["*__pycache__"])
    packages += [f"benchfoundry.{folder}.{sub}" for sub in found]

setup(
    packages=packages,
    package_dir={f"benchfoundry.{folder}": folder for folder in MAPPED},
)
