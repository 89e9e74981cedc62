"""The runtimes a dense encoder embeds with (`retrieval.dense_backend`).

- `torch`: `SentenceTransformer.encode` on torch (the reference); for a BERT folder with
  mean pooling (all-MiniLM-L6-v2) the same computation in plain torch (bert_torch.py,
  bitwise the same vectors) without importing sentence-transformers and transformers.
- `onnx`: the same model exported locally to ONNX and run by onnxruntime.
- `onnx-int8`: that export with dynamically quantised int8 weights.

Each entry loads a runtime object with SentenceTransformer's `encode(texts, batch_size=...,
normalize_embeddings=..., convert_to_numpy=..., show_progress_bar=...)` and
`get_embedding_dimension()`, which the DenseEncoder drives through its embedding
cache. The backends give different vectors, so the cache keeps one id per backend
(`cache_id`); which one ran is a config field like any other, read by every component
that embeds (the dense path and the `semantic` rerank signal), so changing it changes
their stage keys and its effect on recall is measured, not hidden.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ablate.components.contract.registry import Registry

# (model folder, model fingerprint, export folder or None) -> runtime object
Loader = Callable[[Path, str, "Path | None"], Any]
BACKENDS: Registry[Loader] = Registry("dense backend", config_field="retrieval.dense_backend")
_ONNX = {"onnxruntime": "onnx", "onnx": "onnx"}  # module -> the pip extra that installs it
# the runtime, and what made the export (transformers builds the traced model)
_ONNX_LIBRARIES = ("onnxruntime", "onnx", "torch", "transformers")
# `seconds_per_chunk`, declared by each backend: what `ablate check` prices a chunk the
# embedding cache has not seen at (flows/plan/embed_estimate.py), until the cache records
# this machine's own rate. MiniLM (all-MiniLM-L6-v2) at the default 256-token chunks on the
# 2-core reference machine, from `benchmarks/dense_backends.py --texts 300 --questions 20
# --rounds 1` (2026-12-04, load average 3.8-6.4): torch 6.6, onnx 7.3, onnx-int8 11.8
# texts/s at 128-token chunks, i.e. 0.15 / 0.14 / 0.085 s per chunk under that load; the
# demo's three encodings (issue 42: 72 s on about 3k chunks when quiet) give about 0.025 s.
# A 256-token chunk costs about twice a 128-token one: 0.05 s for torch, the backends
# scaled by their measured ratio.


@BACKENDS.register("torch", libraries=("torch", "transformers", "sentence-transformers"),
                   seconds_per_chunk=0.05)
def _torch(model_path: Path, fingerprint: str, export_dir: Path | None) -> Any:
    from ablate.components.retrieval.dense.bert_torch import BertEncoder, supported
    if supported(model_path):
        return BertEncoder(model_path)
    from sentence_transformers import SentenceTransformer
    return SentenceTransformer(str(model_path), device="cpu", local_files_only=True)


@BACKENDS.register("onnx", requires=_ONNX, exported=True, libraries=_ONNX_LIBRARIES,
                   seconds_per_chunk=0.045)
def _onnx(model_path: Path, fingerprint: str, export_dir: Path | None) -> Any:
    from ablate.components.retrieval.dense.onnx_encoder import OnnxEmbedder
    check_installed("onnx")
    return OnnxEmbedder(model_path, fingerprint, "onnx", export_dir)


@BACKENDS.register("onnx-int8", requires=_ONNX, exported=True, libraries=_ONNX_LIBRARIES,
                   seconds_per_chunk=0.028)
def _onnx_int8(model_path: Path, fingerprint: str, export_dir: Path | None) -> Any:
    from ablate.components.retrieval.dense.onnx_encoder import OnnxEmbedder
    check_installed("onnx-int8")
    return OnnxEmbedder(model_path, fingerprint, "onnx-int8", export_dir)


def cache_id(fingerprint: str, backend: str) -> str:
    """The embedding cache's id of a model under a backend. torch keeps the model's
    fingerprint (the id the cache had before backends existed, so its vectors stay
    valid); an exported backend adds its name and the versions that shape the export;
    any other backend adds its name."""
    if backend == "torch":
        return fingerprint
    if BACKENDS.declaration(backend).info.get("exported"):
        from ablate.components.retrieval.dense.onnx_encoder import export_name
        return export_name(fingerprint, backend)
    return f"{fingerprint}-{backend}"


def check_installed(backend: str) -> None:
    """A one-line InputError naming the extra when the backend's modules are missing."""
    from ablate.components.contract.errors import InputError
    decl = BACKENDS.declaration(backend)
    missing = decl.missing_requirement()
    if missing is not None:
        module, extra = missing
        raise InputError(f"dense_backend '{backend}' needs the Python module '{module}', which "
                         f"is not installed; install the extra: pip install 'ablate[{extra}]'",
                         field=BACKENDS.config_field)
