#!/usr/bin/env bash
# Static checks of the project: mypy on ablate.components and ablate.flows, ruff, and the
# import contracts (import-linter). Run from the project root: bash scripts/lint.sh
# Every check runs; the exit status is non-zero when any of them fails.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bin="$root/.venv/bin"

# components/ and flows/ install as ablate.components and ablate.flows (pyproject.toml's
# package-dir), which mypy cannot follow through setuptools' editable finder: it checks a
# tree of two symlinks with those package names instead.
tree="$(mktemp -d)"
trap 'rm -rf "$tree"' EXIT
mkdir "$tree/ablate"
ln -s "$root/components" "$tree/ablate/components"
ln -s "$root/flows" "$tree/ablate/flows"
# An empty ablate/__init__.py in the tree only (ablate is a namespace package when
# installed): without it mypy resolves ablate.components.judge.prompts to the prompt data
# folder judge/prompts/ instead of the module judge/prompts.py (with a namespace top-level
# package it cannot verify either candidate and takes the first, the folder).
: > "$tree/ablate/__init__.py"

status=0

echo "== mypy"
(cd "$tree" && MYPYPATH="$tree" "$bin/mypy" --config-file "$root/pyproject.toml" \
    --python-executable "$bin/python" --cache-dir "$root/.mypy_cache" \
    -p ablate.components -p ablate.flows) || status=1

echo "== ruff"
"$bin/ruff" check . || status=1

echo "== import-linter"
"$bin/lint-imports" || status=1

exit "$status"
