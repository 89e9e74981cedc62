"""Fusion of per-path rankings into one candidate ranking (registered in FUSERS).

- `rrf`: reciprocal rank fusion, score(d) = sum_p w_p / (k + rank_p(d)), rank 1-based;
  a document absent from a path gets nothing from it.
- `convex`: sum_p w_p * norm_p(d), where norm_p normalises path p's scores over the
  documents it returned (min-max to [0, 1], or z-score); a document absent from a path
  gets that path's lowest normalised value (0 under min-max).
A single path passes through unchanged (same order, same scores): `fuser_choice` picks
the `passthrough` fuser then, whatever `fusion.method` says, so no fusion field is read.
Weights: None = 1 for every path; otherwise every fused path needs a non-negative
weight, not all zero (weights of paths not in this variant are ignored, so one weight
table serves a sweep over paths). Output: best first, ties by chunk id ascending.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np

from ablate.components.contract.config import FusionConfig, PipelineConfig
from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Ranking
from ablate.components.contract.registry import Registry

Fuser = Callable[[Mapping[str, Ranking], FusionConfig], Ranking]

FUSERS: Registry[Fuser] = Registry("fuser", config_field="fusion.method")
NORMALIZERS: Registry[Callable[[np.ndarray], np.ndarray]] = Registry(
    "score normalization", config_field="fusion.normalization")


def fuser_name(n_paths: int, method: str) -> str:
    """The one rule: a single path passes through; several are fused by `method`."""
    return "passthrough" if n_paths == 1 else method


def fuser_choice(cfg: PipelineConfig) -> tuple[str, str | None]:
    """(fuser name, the config field that chose it, None when none did)."""
    name = fuser_name(len(cfg.retrieval.paths), cfg.fusion.method)
    return name, (None if name == "passthrough" else "fusion.method")


@NORMALIZERS.register("minmax")
def minmax(x: np.ndarray) -> np.ndarray:
    """(x - min) / (max - min); a constant list maps to all 1 (every item is the best)."""
    if x.size == 0:
        return x.astype(np.float64)
    lo, hi = float(x.min()), float(x.max())
    if hi - lo <= 0:
        return np.ones_like(x, dtype=np.float64)
    return (x - lo) / (hi - lo)


@NORMALIZERS.register("zscore")
def zscore(x: np.ndarray) -> np.ndarray:
    """(x - mean) / std (population std); a constant list maps to all 0."""
    if x.size == 0:
        return x.astype(np.float64)
    sd = float(x.std())
    if sd <= 0:
        return np.zeros_like(x, dtype=np.float64)
    return (x - float(x.mean())) / sd


def path_weights(paths: Sequence[str], weights: Mapping[str, float] | None) -> dict[str, float]:
    """The weight of each fused path (values were checked with the config); raises
    InputError on a missing weight or weights that are all zero for these paths."""
    if weights is None:
        return {p: 1.0 for p in paths}
    out: dict[str, float] = {}
    for p in paths:
        if p not in weights:
            raise InputError(f"no weight for retrieval path '{p}' (given: {sorted(weights)})",
                             field="fusion.weights")
        out[p] = float(weights[p])
    if len(out) > 1 and not any(w > 0 for w in out.values()):
        raise InputError("fusion weights are all zero", field="fusion.weights")
    return out


def _sorted(scores: Mapping[str, float]) -> Ranking:
    return sorted(((d, float(s)) for d, s in scores.items()), key=lambda x: (-x[1], x[0]))


@FUSERS.register("passthrough")
def passthrough(per_path: Mapping[str, Ranking], cfg: FusionConfig) -> Ranking:
    """The one path's ranking, unchanged."""
    if len(per_path) != 1:
        raise InputError(f"passthrough fuses exactly one path, got {len(per_path)}",
                         field="fusion.method")
    (only,) = per_path.values()
    return list(only)


@FUSERS.register("rrf", reads=("fusion.rrf_k", "fusion.weights"))
def rrf(per_path: Mapping[str, Ranking], cfg: FusionConfig) -> Ranking:
    w = path_weights(sorted(per_path), cfg.weights)
    acc: dict[str, float] = {}
    for p in sorted(per_path):
        for rank, (doc, _) in enumerate(per_path[p], start=1):
            acc[doc] = acc.get(doc, 0.0) + w[p] / (cfg.rrf_k + rank)
    return _sorted(acc)


@FUSERS.register("convex", reads=("fusion.weights",),
                  uses={"fusion.normalization": "score normalization"})
def convex(per_path: Mapping[str, Ranking], cfg: FusionConfig) -> Ranking:
    w = path_weights(sorted(per_path), cfg.weights)
    norm = NORMALIZERS.get(cfg.normalization)
    docs = sorted({d for r in per_path.values() for d, _ in r})
    acc = dict.fromkeys(docs, 0.0)
    for p in sorted(per_path):
        ranking = per_path[p]
        if not ranking:
            continue
        vals = norm(np.asarray([s for _, s in ranking], dtype=np.float64))
        floor = float(vals.min())
        got = {d: float(v) for (d, _), v in zip(ranking, vals)}
        for d in docs:
            acc[d] += w[p] * got.get(d, floor)
    return _sorted(acc)


def fuse(per_path: Mapping[str, Ranking], cfg: FusionConfig) -> Ranking:
    """Fuse the rankings of one question (a single path passes through unchanged)."""
    FUSERS.get(cfg.method)  # an unknown method is an error even for a single path
    return FUSERS.get(fuser_name(len(per_path), cfg.method))(per_path, cfg)
