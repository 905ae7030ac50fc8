#!/usr/bin/env bash
# import-linter's contracts (pyproject.toml) on the package as it installs: a copy built into a
# temporary folder, since the Prefect folders (tasks/, flows/...) map into `benchfoundry` only
# when installed. Usage: scripts/lint_imports.sh [VENV]
set -euo pipefail
venv="$(cd "${1:-.venv}" && pwd)"
repo="$PWD"
config="$repo/pyproject.toml"
target=$(mktemp -d)
had_build=0; [ -e "$repo/build" ] && had_build=1
cleanup() { rm -rf "$target"; [ "$had_build" = 1 ] || rm -rf "$repo/build"; }
trap cleanup EXIT
if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
  --no-build-isolation --no-compile --target "$target" . >"$target/pip.log" 2>&1; then
  cat "$target/pip.log" >&2
  echo "lint_imports: could not build the package to check its imports" >&2
  exit 1
fi
# Run from the copy: import-linter puts the working folder first on the path.
cd "$target" && PYTHONPATH="$target" "$venv/bin/lint-imports" --no-cache "$config"
