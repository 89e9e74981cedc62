"""Worth intervals on 0/1 metrics with rare changes (issue 56, item 3): labelled when
nothing changes, widened to the Tango score bound when the changes sit in few clusters,
as stats.parquet's 0/1 intervals are (components/stats/worth_table.py)."""

from __future__ import annotations

import numpy as np

from ablate.components.stats.binary_bound import tango_interval
from ablate.components.stats.worth import all_cells
from ablate.components.stats.worth_table import FLAG_NO_CHANGE, worth_inference

CELLS = all_cells(2)


def _scores(n: int, changed: dict[int, list[int]]) -> np.ndarray:
    """n questions x 4 cells of 0/1 scores, 0 everywhere except: question q scores 1 in
    every cell where factor changed[q][0] is on."""
    Y = np.zeros((n, len(CELLS)))
    for q, (f,) in changed.items():
        for c, cell in enumerate(CELLS):
            Y[q, c] = float(cell[f] == 1)
    return Y


def test_a_factor_that_changes_nothing_is_labelled_and_not_a_point_interval():
    """It was [0, 0] at a stated level 0.9875, unlabelled: 50 tied questions cannot rule
    out a true value of 0.02 (coverage 0.34-0.70 in the audit)."""
    Y = _scores(50, {3: [0], 17: [0]})  # factor 0 fixes two questions, factor 1 nothing
    r = worth_inference(Y, CELLS, np.arange(50), clustered=False, test="t")
    assert r.ci_flag[1].startswith(FLAG_NO_CHANGE) and r.n_changed_clusters[1] == 0
    assert r.ci_low[1] < -0.05 and r.ci_high[1] > 0.05, (r.ci_low, r.ci_high)
    assert "+tango" in r.ci_method[1]


def test_changes_in_few_documents_hold_the_tango_interval_of_the_scaled_values():
    codes = np.repeat(np.arange(30), 5)
    Y = _scores(150, {0: [0], 1: [0], 5: [0]})  # two documents change
    r = worth_inference(Y, CELLS, codes, clustered=True, test="t")
    assert r.n_changed_clusters[0] == 2 and "few_changed_clusters" in r.ci_flag[0]
    X = np.zeros((150, 1))
    X[[0, 1, 5], 0] = 1.0
    S = np.bincount(codes, X[:, 0], 30)[:, None]
    N = np.bincount(codes, minlength=30)[:, None].astype(float)
    lo, hi = tango_interval(X, np.ones_like(X, dtype=bool), S, N, np.array([0.05 / 2]))
    assert r.ci_low[0] <= lo[0] + 1e-12 and r.ci_high[0] >= hi[0] - 1e-12
    assert r.ci_high[0] > 0.05  # the t interval of 3 changes in 150 was about [-0.01, 0.05]


def test_graded_metrics_and_many_changed_clusters_keep_the_t_interval():
    rng = np.random.default_rng(2)
    Y = rng.uniform(size=(60, 4))
    r = worth_inference(Y, CELLS, np.arange(60), clustered=False, test="t")
    assert r.ci_flag == ["", "", ""] and all("tango" not in m for m in r.ci_method)
    Yb = (rng.uniform(size=(200, 4)) < 0.5).astype(float)
    r = worth_inference(Yb, CELLS, np.arange(200), clustered=False, test="t")
    assert r.n_changed_clusters.min() >= 10 and r.ci_flag == ["", "", ""]
