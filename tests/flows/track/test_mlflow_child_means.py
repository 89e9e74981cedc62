"""Every MLflow child, the baseline's included, carries the mean of every key metric and of
its last retrieval stage's metrics, so the Compare view shows scores by variant, not only
differences (flows/track/run_data.variant_metrics; no MLflow server needed)."""

from __future__ import annotations

import polars as pl

from ablate.flows.track.run_data import reused_latencies, variant_metrics


def _per_query(stages: tuple[str, ...], extra: dict | None = None) -> pl.DataFrame:
    cols = {f"{s}/{m}": [0.0, 1.0, 1.0, 0.0] for s in stages for m in ("recall_at_5", "ndcg_at_10")}
    return pl.DataFrame({"variant": ["baseline"] * 2 + ["v"] * 2, "qid": ["a", "b"] * 2,
                         **cols, **(extra or {})})


def _stats(metrics: list[str]) -> pl.DataFrame:
    return pl.DataFrame([{"variant": "v", "metric": m, "delta": 0.5, "ci_low": -0.1,
                          "ci_high": 0.9, "p_adjusted": 0.4, "n_used": 2} for m in metrics])


def test_retrieval_only_children_carry_their_last_stage_means():
    """A pipeline without a context stage (an older retrieval-only sweep): the reranked
    means are its last stage's; the baseline child had only `questions` before."""
    pq = _per_query(("candidates", "reranked"))
    key = ["reranked/recall_at_5"]
    base = variant_metrics(pq, _stats(key), None, "baseline", key)
    assert base["reranked/recall_at_5"] == 0.5 and base["reranked/ndcg_at_10"] == 0.5
    assert "candidates/recall_at_5" not in base  # not the last stage, not key: the parent's
    v = variant_metrics(pq, _stats(key), None, "v", key)
    assert v["reranked/recall_at_5"] == 0.5 and v["delta/reranked/recall_at_5"] == 0.5


def test_a_key_metric_of_an_earlier_stage_has_its_mean_beside_its_delta():
    pq = _per_query(("candidates", "reranked", "final"), {"answer/f1": [0.2, 0.4, 0.6, 0.8]})
    key = ["candidates/recall_at_5", "answer/f1"]
    for name in ("baseline", "v"):
        m = variant_metrics(pq, _stats(key), None, name, key)
        assert "candidates/recall_at_5" in m and "answer/f1" in m, (name, sorted(m))
        assert "final/ndcg_at_10" in m and "reranked/ndcg_at_10" not in m
    v = variant_metrics(pq, _stats(key), None, "v", key)
    assert v["answer/f1"] == 0.7 and v["delta/candidates/recall_at_5"] == 0.5


def test_reused_latencies_are_named_on_the_child():
    t = pl.DataFrame({"variant": ["baseline", "baseline", "v", "v"], "qid": ["a", "b"] * 2,
                      "latency/retrieve_dense": [0.1] * 4,
                      "reused/retrieve_dense": [False, False, True, False],
                      "latency/fuse": [0.0] * 4, "reused/fuse": [True] * 4})
    assert reused_latencies(t, "v") == "retrieve_dense 50%, fuse 100%"
    assert reused_latencies(t.drop("reused/fuse"), "baseline") == ""
    assert reused_latencies(None, "v") == ""
