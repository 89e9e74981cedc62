"""The score stage's inputs to the cost metrics (components/metrics/cost.py): each
variant's prices, and what its stages recorded of each question's online work."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import polars as pl

from ablate.components.contract.config import PipelineConfig
from ablate.components.contract.records import Question
from ablate.components.contract.registry import registry
from ablate.components.metrics.cost import query_usage

# a path that reads the dense model embeds the query and searches a vector index
VECTOR_FIELD = "retrieval.dense_model"


def pricing(costs: Any, cfg: PipelineConfig) -> dict[str, float]:
    """A variant's prices (components/metrics/cost.py) from the experiment's `costs:`; the
    generator's own `cost_per_1k_in` / `_out`, when not 0, win over `costs.generator_*`
    (a sweep over generators prices each one)."""
    g = cfg.generator
    return {"in": g.cost_per_1k_in or costs.generator_in_per_1k,
            "out": g.cost_per_1k_out or costs.generator_out_per_1k,
            "embed": costs.embed_per_1k_tokens, "search": costs.vector_search,
            "rerank": costs.rerank_call, "judge_in": costs.judge_in_per_1k,
            "judge_out": costs.judge_out_per_1k}


def vector_paths(paths: Sequence[str]) -> list[str]:
    """The paths among `paths` that embed the query and search vectors (they read
    `retrieval.dense_model`)."""
    reg = registry("retrieval path")
    return [p for p in paths if p in reg and VECTOR_FIELD in reg.declaration(p).reads]


def usage(questions: Sequence[Question], count: Callable[[str], int], cfg: PipelineConfig,
          retrieved: Mapping[str, pl.DataFrame], fused: pl.DataFrame,
          judged: pl.DataFrame | None) -> dict[str, Any]:
    """qid -> its usage, one for every repeat, or (with the judge's tokens) a list with
    one per repeat: the retrieval
    side (query tokens, vector searches, candidates reranked) from the retrieve and fuse
    stages' results, the judge's tokens from the judge stage's (absent from a result
    stored before they were recorded)."""
    searched = {p: set(retrieved[p]["qid"].to_list()) for p in vector_paths(list(retrieved))}
    reranked: dict[str, int] = {}
    if cfg.rerank.method != "none":
        counts = fused.select("qid", pl.col("chunk_ids").list.len().alias("n"))
        reranked = {q: min(int(n), cfg.rerank.depth) for q, n in counts.iter_rows()}
    base = query_usage(questions, count, searched, reranked)
    out: dict[str, Any] = dict(base)
    if judged is not None and {"tokens_in", "tokens_out"} <= set(judged.columns):
        if "repeat" in judged.columns:
            judged = judged.sort("repeat", maintain_order=True)
        tokens: dict[str, list[dict[str, float]]] = {}
        for q, tin, tout in judged.select("qid", "tokens_in", "tokens_out").iter_rows():
            tokens.setdefault(q, []).append({"judge_in": float(tin), "judge_out": float(tout)})
        out = {q: [u | t for t in tokens[q]] if q in tokens else u for q, u in base.items()}
    return out
