"""k, the clusters with any change, beside G (issue 38, items 2 and 4): the stats table
carries it, an interval resting on fewer than FEW_CHANGED changed clusters is flagged, and
no MDE is printed where the sign-flip test cannot reject with G clusters."""

from __future__ import annotations

import numpy as np
import polars as pl

from ablate.components.stats import compare_variants
from ablate.components.stats.clusters import FEW_CHANGED, FLAG_FEW_CHANGED


def _table(diffs: np.ndarray, clusters: np.ndarray) -> pl.DataFrame:
    n = diffs.size
    qid = [f"q{i}" for i in range(n)]
    base = np.full(n, 0.5)
    return pl.DataFrame({
        "variant": ["baseline"] * n + ["v"] * n, "qid": qid * 2,
        "m/x": np.r_[base, base + diffs], "cluster": [f"d{c}" for c in clusters] * 2})


def _compare(t: pl.DataFrame) -> dict:
    return compare_variants(t, baseline="baseline", metrics=["m/x"], resamples=2000,
                            cluster_col="cluster").row(0, named=True)


def test_the_issues_example_counts_3_changed_documents_of_50_and_flags_the_interval():
    # 50 documents x 20 questions; two wins and two losses in three documents
    clusters = np.repeat(np.arange(50), 20)
    d = np.zeros(1000)
    d[[0, 1]] = 0.5    # document 0: two wins
    d[20] = -0.5       # document 1: a loss
    d[40] = -0.5       # document 2: a loss
    r = _compare(_table(d, clusters))
    assert r["n_clusters"] == 50 and r["n_changed_clusters"] == 3
    assert FLAG_FEW_CHANGED in r["ci_flag"]


def test_enough_changed_documents_are_not_flagged():
    rng = np.random.default_rng(0)
    clusters = np.repeat(np.arange(30), 4)
    d = rng.normal(0, 0.1, 120)
    r = _compare(_table(d, clusters))
    assert r["n_changed_clusters"] == 30 >= FEW_CHANGED
    assert FLAG_FEW_CHANGED not in (r["ci_flag"] or "")


def test_no_mde_where_the_sign_flip_test_cannot_reject_with_g_clusters():
    # 2 documents: the smallest two-sided p is 2/2^2 = 0.5 > 0.05: nothing can be detected
    rng = np.random.default_rng(1)
    clusters = np.repeat(np.arange(2), 12)
    r = _compare(_table(rng.normal(0, 0.1, 24), clusters))
    assert r["n_clusters"] == 2 and np.isnan(r["mde"])
    # 8 documents can (2/256 < 0.05): an MDE
    clusters = np.repeat(np.arange(8), 3)
    r = _compare(_table(rng.normal(0, 0.1, 24), clusters))
    assert np.isfinite(r["mde"])
