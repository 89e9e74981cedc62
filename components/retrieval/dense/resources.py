"""The dense family's costly objects: encoders (a model runtime each, loaded lazily).

A run's encoders (`run_encoder`) live in the run's memo under `encoder:{model}:{backend}`
and use the on-disk embedding cache under the cache folder (`embeddings/`, the ONNX
exports beside it in `onnx/`); a caller with no run gets `default_encoder`, without a disk
cache (an ONNX export made in memory), memoised per process. When no model-bound stage is
left, the `dense encoders` release hook (runtime/resources.py) unloads the run's encoders'
runtimes; their caches and counters stay.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ablate.components.retrieval.dense.encoder import DenseEncoder
from ablate.components.retrieval.indexes import LRU
from ablate.components.runtime.models import dense_model_path
from ablate.components.runtime.resources import Memo, on_release

_ENCODERS = LRU(2)
MEMO_PREFIX = "encoder:"  # a run's encoders' memo keys (the sweep sums their counters)


def default_encoder(model: str, backend: str = "torch") -> DenseEncoder:
    """An encoder for `retrieval.dense_model` on `retrieval.dense_backend` without a disk
    cache (an ONNX export is made in memory), for callers given none."""
    path = dense_model_path(model)
    return _ENCODERS.get_or_make((str(path), backend),
                                 lambda: DenseEncoder(path, None, backend=backend))


def run_encoder(root: Path, memo: Memo, model: str, backend: str = "torch") -> DenseEncoder:
    """The run's encoder of `model` on `backend`, with the on-disk embedding cache under
    `root` (the ONNX exports beside it), built once per run."""
    root = Path(root)
    return memo.get_or_build(
        f"{MEMO_PREFIX}{model}:{backend}",
        lambda: DenseEncoder(dense_model_path(model), root / "embeddings", backend=backend,
                             export_dir=root / "onnx"))


def unload_encoders(memo: Mapping[str, Any]) -> None:
    """Unload the runtimes of the run's encoders (they load again when used)."""
    for value in list(memo.values()):
        if isinstance(value, DenseEncoder):
            value.unload()


on_release("dense encoders", unload_encoders)
