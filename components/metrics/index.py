"""Metrics of the dense index as an ablation variable (`retrieval.dense_index`).

- `dense/ann_recall_at_k`: the share of the exact (flat) top k that the dense path's
  top k contains, over the same vectors. 1 for the exact `flat` index by definition;
  for `flat16`, `hnsw` or `ivf` what the index lost. No column without a dense path (a
  bm25-only pipeline measures no dense index); NaN for a question whose exact top k is
  empty (an empty corpus).
- `index/retrieve_<path>_build_s` and `index/retrieve_<path>_search_s`: the seconds to
  build a path's index (offline, the same for every question of the stage) and of
  searching it per question (also inside `latency/retrieve_<path>`). They vary run to run,
  so they go to timings.parquet and MLflow beside the latencies, not to the statistics.
"""

from __future__ import annotations

import math

from ablate.components.metrics.registry import QuestionView, column, metric

DENSE = "dense"  # the retrieval path whose index `retrieval.dense_index` chooses


@metric("ann_recall", stages=("dense",), direction="higher", at_k=True, needs={"dense": ()},
        version="2")  # 2: no column without a dense path (was NaN)
def _ann_recall(view: QuestionView) -> dict[str, float]:
    """Share of the exact (flat) top k in the dense index's top k (1 for flat)."""
    path = view.paths.get(DENSE)
    out: dict[str, float] = {}
    if path is None:  # no dense path: nothing measured, no column
        return out
    for k in view.params["ks"]:
        if path.exact_ids is None:  # the exact index: its own top k
            value = 1.0
        else:
            exact = set(path.exact_ids[:k])
            value = len(exact & set(path.chunk_ids[:k])) / len(exact) if exact else math.nan
        out[column("dense", "ann_recall", k)] = value
    return out


@metric("*", stages=("index",), direction="lower", high=math.inf, needs={"index": ()},
        timing=True)
def _index_seconds(view: QuestionView) -> dict[str, float]:
    """Seconds to build each path's index (offline) and to search it per question."""
    out: dict[str, float] = {}
    for name, path in sorted(view.paths.items()):
        for what, value in (("build_s", path.build_s), ("search_s", path.search_s)):
            if not math.isnan(value):
                out[f"index/retrieve_{name}_{what}"] = value
    return out
