"""CR2 (Bell-McCaffrey) cluster-robust variance with its Satterthwaite degrees of freedom
(issue 38, item 3): the general matrix formulas, equality with CR1 + t(G-1) for equal
cluster sizes, and the level when one document holds 40 % of the questions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ablate.components.stats.clusters import cluster_se, cluster_sums, cluster_ttest


def _inv_sqrt(a: np.ndarray) -> np.ndarray:
    vals, vecs = np.linalg.eigh(a)
    return (vecs / np.sqrt(vals)) @ vecs.T


def _cr2_by_matrices(y: np.ndarray, codes: np.ndarray) -> tuple[float, float]:
    """The textbook CR2 variance and Bell-McCaffrey df of the intercept of y ~ 1 (Imbens &
    Kolesar 2016, working independence), with n x n matrices."""
    n = y.size
    X = np.ones((n, 1))
    H = X @ np.linalg.inv(X.T @ X) @ X.T
    e = y - H @ y
    IH = np.eye(n) - H
    meat, cols = 0.0, []
    for g in np.unique(codes):
        idx = np.flatnonzero(codes == g)
        A = _inv_sqrt(IH[np.ix_(idx, idx)])
        u = (X[idx].T @ A @ e[idx]).item() / n
        meat += u * u
        col = np.zeros(n)
        col += IH[:, idx] @ A @ X[idx, 0] / n  # G_g = (I - H)_g' A_g X_g (X'X)^-1
        cols.append(col)
    Gm = np.stack(cols, axis=1)
    lam = np.linalg.eigvalsh(Gm.T @ Gm)
    return math.sqrt(meat), lam.sum() ** 2 / (lam**2).sum()


@pytest.mark.parametrize("sizes", [[8, 1, 2, 3, 1, 5], [20, 2, 2, 2, 2], [1] * 7, [3, 3, 3, 3]])
def test_cr2_se_and_df_are_the_matrix_formulas(sizes):
    rng = np.random.default_rng(len(sizes))
    codes = np.repeat(np.arange(len(sizes)), sizes)
    y = rng.normal(0.1, 1.0, codes.size)
    S, N = cluster_sums(y[:, None], np.ones((y.size, 1), bool), codes)
    _, se, df = cluster_se(S, N)
    want_se, want_df = _cr2_by_matrices(y, codes)
    assert se[0] == pytest.approx(want_se, rel=1e-9)
    assert df[0] == pytest.approx(want_df, rel=1e-9)


def test_equal_cluster_sizes_keep_cr1_and_g_minus_1_df():
    rng = np.random.default_rng(2)
    codes = np.repeat(np.arange(9), 4)
    y = rng.normal(0, 1, (36, 3))
    S, N = cluster_sums(y, np.ones_like(y, bool), codes)
    theta, se, df = cluster_se(S, N)
    cr1 = np.sqrt(9 / 8 * ((S - theta * N) ** 2).sum(0)) / 36
    assert np.allclose(se, cr1, rtol=1e-12) and np.allclose(df, 8)


def test_one_document_with_40_percent_of_the_questions_keeps_the_t_test_at_its_level():
    rng = np.random.default_rng(40)
    reps, n, g = 2000, 200, 20
    sizes = np.r_[80, np.full(g - 1, 120 // (g - 1))]
    sizes[1: 120 % (g - 1) + 1] += 1
    codes = np.repeat(np.arange(g), sizes)
    d = rng.normal(0, math.sqrt(0.1), (g, reps))[codes] + rng.normal(0, math.sqrt(0.9), (n, reps))
    S, N = cluster_sums(d, np.ones_like(d, bool), codes)
    rate = np.mean(cluster_ttest(S, N, 0.05)[1] < 0.05)
    assert rate <= 0.07, rate  # CR1 with G - 1 df: 0.14


def test_ppi_interval_covers_when_one_document_holds_40_percent_of_the_questions():
    from ablate.components.stats.ppi import ppi_mean
    rng = np.random.default_rng(1)
    g, n = 20, 200
    sizes = np.r_[80, np.full(g - 1, 120 // (g - 1))]
    sizes[1: 120 % (g - 1) + 1] += 1
    codes = np.repeat(np.arange(g), sizes).astype(str)
    idx = np.repeat(np.arange(g), sizes)
    hits = []
    for _ in range(600):
        truth = rng.normal(0, math.sqrt(0.3), g)[idx] + rng.normal(0, math.sqrt(0.7), n)
        f = truth + rng.normal(0, 0.7, n)
        y = np.where(rng.random(n) < 0.4, truth, np.nan)
        r = ppi_mean(f, y, codes)
        hits.append(r.ci_low <= 0.0 <= r.ci_high)  # the population mean is 0
    assert np.mean(hits) >= 0.925, np.mean(hits)  # CR1 with G_L - 1 df: 0.82
