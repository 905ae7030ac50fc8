#!/usr/bin/env bash
# import-linter's contracts (pyproject.toml) on the package as it installs: a copy built into a
# temporary folder, since the Prefect folders (tasks/, flows/...) map into `benchfoundry` only
# when installed. Usage: scripts/lint_imports.sh [VENV]
set -euo pipefail
venv="${1:-.venv}"
target=$(mktemp -d)
trap 'rm -rf "$target"' EXIT
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
  --no-build-isolation --no-compile --target "$target" . 2>/dev/null
rm -rf build
config="$PWD/pyproject.toml"
lint="$(cd "$venv/bin" && pwd)/lint-imports"
# Run from the copy: import-linter puts the working folder first on the path.
cd "$target" && PYTHONPATH="$target" "$lint" --no-cache --config "$config"
