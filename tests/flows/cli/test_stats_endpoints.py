"""`ablate stats` prints a CI endpoint bracketed at 0 as 0, never 5.00e-11 (issue 38, item
4), and warns where the changes sit in fewer than FEW_CHANGED clusters (item 2)."""

from __future__ import annotations

import numpy as np
import polars as pl

from ablate.components.stats import compare_variants


def _table() -> pl.DataFrame:
    n = 1000
    d = np.zeros(n)
    d[[0, 1]], d[20], d[40] = 0.5, -0.5, -0.5
    base = np.full(n, 0.5)
    return pl.DataFrame({"variant": ["baseline"] * n + ["v"] * n, "qid": [f"q{i}" for i in range(n)] * 2,
                         "m/x": np.r_[base, base + d],
                         "cluster": [f"d{c}" for c in np.repeat(np.arange(50), 20)] * 2})


def test_an_endpoint_within_tolerance_of_0_prints_as_0_and_few_changed_clusters_warn():
    from flows.cli.stats import format_stats
    df = compare_variants(_table(), baseline="baseline", metrics=["m/x"], resamples=2000,
                          cluster_col="cluster")
    df = df.with_columns(ci_low=pl.lit(5.0e-11), ci_high=pl.lit(0.0123), delta=pl.lit(0.006))
    out = format_stats(df)
    assert "[0, 0.0123]" in out and "e-11" not in out
    assert "changes in only 3 of 50 clusters" in out


def test_a_widened_0_1_interval_says_so_in_the_warning():
    from flows.cli.stats import format_stats
    n = 1000
    d = np.zeros(n)
    d[[0, 1]], d[20], d[40] = 1.0, -1.0, -1.0  # a 0/1 metric: -1, 0, +1 differences
    t = pl.DataFrame({"variant": ["baseline"] * n + ["v"] * n, "qid": [f"q{i}" for i in range(n)] * 2,
                      "m/x": np.r_[np.zeros(n), d],
                      "cluster": [f"d{c}" for c in np.repeat(np.arange(50), 20)] * 2})
    out = format_stats(compare_variants(t, baseline="baseline", metrics=["m/x"], resamples=2000,
                                        cluster_col="cluster"))
    assert "changes in only 3 of 50 clusters" in out and "widened to the Tango" in out
    assert "may not cover" not in out
