"""Judge-corrected rows of stats.parquet (components/stats/ppi_compare.py) and their place
in the correction (compare.compare_joint)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from ablate.components.stats.compare import compare_joint, compare_variants
from ablate.components.stats.ppi import ppi_paired
from ablate.components.stats.ppi_compare import corrected_comparisons, corrected_rows, label_vectors


def _labels(rows: list[dict]) -> pl.DataFrame:
    base = {"qid": None, "metric": "judge/x", "answer": None, "variant": None, "label": None,
            "annotator": None, "labelled_at": None, "line": 1}
    return pl.DataFrame([{**base, **r} for r in rows],
                        schema={"qid": pl.String, "metric": pl.String, "answer": pl.String,
                                "variant": pl.String, "label": pl.Float64,
                                "annotator": pl.String, "labelled_at": pl.String,
                                "line": pl.Int64})


def test_a_variants_own_label_wins_over_an_answer_label():
    rows = pl.DataFrame({"qid": ["a", "b", "c"], "answer": ["Paris", "Rome", None]})
    labels = _labels([{"qid": "a", "answer": "Paris", "label": 1.0},
                      {"qid": "a", "variant": "v", "label": 0.0},
                      {"qid": "b", "answer": "Roma", "label": 1.0},  # another answer's
                      {"qid": "c", "variant": "w", "label": 1.0}])  # another variant's
    got = label_vectors(rows, labels, "judge/x", "v")
    assert got[0] == 0.0 and np.isnan(got[1]) and np.isnan(got[2])
    assert label_vectors(rows, labels, "judge/x", "u")[0] == 1.0


def _sweep(n=60, seed=0):
    """Two variants, a judge that overrates the variant by 0.3 where the truth is equal."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, n).astype(float)
    qids = [f"q{i}" for i in range(n)]
    clusters = [f"d{i % 12}" for i in range(n)]
    f_b = truth.copy()
    f_v = np.clip(truth + 0.3, 0, 1)
    pq = pl.DataFrame({"variant": ["baseline"] * n + ["v"] * n, "qid": qids * 2,
                       "cluster": clusters * 2, "answer": ["b"] * n + ["v"] * n,
                       "judge/x": np.concatenate([f_b, f_v]),
                       "answer/f1": np.concatenate([truth, truth + rng.normal(0, 0.01, n)])})
    labelled = [i for i in range(n) if i % 2 == 0]
    labels = _labels([{"qid": qids[i], "variant": var, "label": float(truth[i])}
                      for i in labelled for var in ("baseline", "v")])
    return pq, labels, truth, f_v, f_b, clusters


def test_corrected_rows_follow_ppi_and_agree_with_significance():
    pq, labels, truth, f_v, f_b, clusters = _sweep()
    found = corrected_comparisons(pq, labels, baseline="baseline", metrics=["judge/x"],
                                  cluster_col="cluster", alpha=0.05)
    assert [(c.name, c.variant) for c in found] == [("ppi/judge/x", "v")]
    y = np.where(np.arange(truth.size) % 2 == 0, truth, np.nan)
    want = ppi_paired(f_v, f_b, y, y, clusters, alpha=0.05)
    assert math.isclose(found[0].diff.estimate, want.estimate)
    assert found[0].raw_delta > 0.1  # the judge's own difference is biased
    rows = corrected_rows(found, np.array([found[0].diff.p]), np.array([1]), baseline="baseline",
                          alpha=0.05, correction="holm", family="per_metric", seed=0,
                          cluster_col="cluster")
    r = rows.row(0, named=True)
    assert r["metric"] == "ppi/judge/x" and r["raw_metric"] == "judge/x"
    assert r["n_labelled"] == 30 and r["clusters_labelled"] == 6
    assert r["ci_low"] <= r["delta"] <= r["ci_high"]
    assert r["significant"] == (not r["ci_low"] <= 0 <= r["ci_high"])
    assert abs(r["delta"]) < r["raw_delta"]  # the correction removes most of the bias


def test_external_comparisons_join_the_family():
    pq, *_ = _sweep()
    kw = dict(baseline="baseline", metrics=["answer/f1"], cluster_col="cluster", resamples=500,
              bootstrap_resamples=200)
    alone = compare_variants(pq, family="all", **kw)
    joint, p_adj, size = compare_joint(pq, family="all", external=[("ppi/judge/x", 0.001)], **kw)
    assert alone["family_size"][0] == 1 and joint["family_size"][0] == 2 and size.tolist() == [2]
    assert joint["p_adjusted"][0] >= alone["p_adjusted"][0]  # holm over two tests
    per_metric, p_adj, size = compare_joint(pq, family="per_metric",
                                            external=[("ppi/judge/x", 0.001)], **kw)
    assert per_metric["family_size"][0] == 1 and size.tolist() == [1] and p_adj[0] == 0.001
