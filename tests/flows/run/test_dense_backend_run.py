"""A sweep over `retrieval.dense_backend` (onnx baseline, the default; onnx-int8 variant) on the tiny
SQuAD fixture, stages run directly (no Prefect, no MLflow): the variant re-runs only the
dense path and what follows, exports the model once into the cache folder's `onnx/`,
keeps its own embedding cache, and the outputs record which backend ran."""

from __future__ import annotations

import json

import pytest

from tests.specs import FAST_STATS, experiment, pipeline, vary

pytest.importorskip("onnxruntime")

SPEC = experiment(
    "dense-backend", tier="full", split="all", seed=3,
    metrics={"ks": [1, 5], "key": ["reranked/recall_at_5"]}, stats=FAST_STATS,
    baseline=pipeline(chunking={"size": 48, "overlap": 16},
                      retrieval={"paths": ["bm25", "dense"], "depth": 10},
                      rerank={"method": "none"}, context=None, generator={"name": "none"}),
    sweeps=[vary("retrieval.dense_backend", "onnx-int8")])


def test_only_the_dense_path_and_after_run_again(sweep):
    ctx, _, _ = sweep
    base = ctx.plan.by_variant["baseline"]
    var = ctx.plan.by_variant["retrieval.dense_backend=onnx-int8"]
    for stage in ("chunk", "label", "retrieve:bm25"):
        assert base[stage] == var[stage], stage
    for stage in ("retrieve:dense", "fuse", "rerank", "score"):
        assert base[stage] != var[stage], stage


def test_export_and_embeddings_live_in_the_cache_folder(sweep):
    ctx, _, _ = sweep
    root = ctx.store.root
    exports = sorted(p.parent.name for p in (root / "onnx").rglob("model.onnx"))
    assert len(exports) == 2 and [e for e in exports if "-onnx-int8-" in e]  # fp32 -> int8
    caches = sorted(p.name for p in (root / "embeddings").iterdir())
    assert len(caches) == 2 and sum("-onnx-int8-" in c for c in caches) == 1
    from ablate.flows.run.store import cache_files
    assert {f.area for f in cache_files(root, ["onnx"])} == {"onnx"}  # `ablate cache` sees them


def test_outputs_record_the_backend(sweep):
    _, out, _ = sweep
    variants = {v["name"]: v for v in json.loads((out / "variants.json").read_text())}
    assert variants["baseline"]["models"]["embedder"]["backend"].startswith("onnx (onnx")
    assert variants["retrieval.dense_backend=onnx-int8"]["models"]["embedder"]["backend"] \
        .startswith("onnx-int8 (onnx")
