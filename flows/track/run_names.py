"""Short, distinct MLflow run names for the variants of a sweep: `rrf_k=200`,
`gen=smollm2`, `paths=bm25`, `rerank=fus0.3,sem0.6,sou0.1` (MLflow's tables cut long names,
and `rerank.weights=fusion:0.3,…` and `rerank.weights=semantic:1` looked the same)."""

from __future__ import annotations

from typing import Any

from ablate.components.contract.dotted import format_value
from ablate.components.contract.vocab import BASELINE

# A few swept fields whose last segment alone says too little ("name", "size", "weights").
ALIASES = {"generator.name": "gen", "generator.model": "gen_model", "chunking.size": "chunk",
           "chunking.method": "chunker", "retrieval.paths": "paths", "rerank.weights": "rerank",
           "fusion.method": "fusion", "fusion.path_weights": "fusion_w",
           "rerank.method": "reranker", "context.budget": "budget"}


def _label(value: Any) -> str:
    if isinstance(value, dict):  # abbreviated keys: dict values are what made names long
        return ",".join(f"{str(k)[:3]}{format_value(v)}" for k, v in sorted(value.items()))
    return format_value(value)


def _short(variable: str) -> str:
    return ALIASES.get(variable, variable.rsplit(".", 1)[-1])


def run_names(variants: list[dict[str, Any]]) -> dict[str, str]:
    """variant name -> short run name, unique within the sweep (falls back to the full
    variable, then to the variant name, when short names would collide)."""
    swept = {v["variable"] for v in variants if v.get("variable")}
    shorts = {var: _short(var) for var in swept}
    clash = {var for var in swept if list(shorts.values()).count(shorts[var]) > 1}
    out: dict[str, str] = {}
    for v in variants:
        if not v.get("variable"):
            out[v["name"]] = BASELINE if v["name"] == BASELINE else v["name"]
            continue
        var, value = v["variable"], v.get("value")
        parts = var.split("+")  # several fields at once (a named variant, a factorial cell)
        if len(parts) > 1 and isinstance(value, dict) and set(parts) <= set(value):
            out[v["name"]] = " × ".join(f"{_short(p)}={_label(value[p])}" for p in parts)
            continue
        head = var if var in clash else shorts[var]
        out[v["name"]] = f"{head}={_label(value)}"
    seen: dict[str, int] = {}
    for name in out.values():
        seen[name] = seen.get(name, 0) + 1
    return {k: (n if seen[n] == 1 else k) for k, n in out.items()}
