"""Paired t, Wilcoxon and descriptives against scipy on the same differences."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from ablate.components.stats.ttest import (
    effect_size_dz,
    paired_moments,
    paired_ttest,
    wilcoxon_pvalues,
    win_tie_loss,
)


def _masked(rng, n=40, cols=3):
    a = rng.normal(0.5, 0.2, (n, cols))
    b = a - rng.normal(0.05, 0.1, (n, cols))
    M = rng.random((n, cols)) > 0.2
    return a, b, np.where(M, a - b, 0.0), M


def test_paired_t_matches_scipy_ttest_rel():
    rng = np.random.default_rng(0)
    a, b, D, M = _masked(rng)
    t, p, lo, hi = paired_ttest(D, M, alpha=0.1)
    for j in range(D.shape[1]):
        ref = sps.ttest_rel(a[M[:, j], j], b[M[:, j], j])
        ci = ref.confidence_interval(confidence_level=0.9)
        assert t[j] == pytest.approx(ref.statistic, rel=1e-10)
        assert p[j] == pytest.approx(ref.pvalue, rel=1e-10)
        assert (lo[j], hi[j]) == pytest.approx((ci.low, ci.high), rel=1e-10)


def test_degenerate_t_follows_scipy():
    D = np.array([[0.0, 0.5], [0.0, 0.5], [0.0, 0.5]])
    M = np.ones_like(D, dtype=bool)
    t, p, _, _ = paired_ttest(D, M, 0.05)
    assert np.isnan(t[0]) and np.isnan(p[0])
    assert t[1] == np.inf and p[1] == 0.0
    t, p, lo, _ = paired_ttest(D[:1], M[:1], 0.05)   # one pair: undefined
    assert np.isnan(p).all() and np.isnan(lo).all()


def test_wilcoxon_matches_scipy():
    rng = np.random.default_rng(1)
    a, b, D, M = _masked(rng, n=30)
    p = wilcoxon_pvalues(D, M)
    for j in range(D.shape[1]):
        assert p[j] == pytest.approx(sps.wilcoxon(a[M[:, j], j] - b[M[:, j], j]).pvalue)
    assert np.isnan(wilcoxon_pvalues(np.zeros((5, 1)), np.ones((5, 1), bool))[0])


def test_moments_dz_and_win_tie_loss():
    D = np.array([[0.5, 1.0], [0.0, -1.0], [-0.25, 9.0], [1.0, 0.0]])
    M = np.array([[1, 1], [1, 1], [1, 0], [1, 1]], dtype=bool)
    n, mean, sd = paired_moments(D, M)
    assert list(n) == [4, 3]
    assert mean[0] == pytest.approx(np.mean([0.5, 0, -0.25, 1]))
    assert sd[1] == pytest.approx(np.std([1.0, -1.0, 0.0], ddof=1))
    assert effect_size_dz(mean, sd)[0] == pytest.approx(mean[0] / np.std([0.5, 0, -0.25, 1], ddof=1))
    w, t, l = win_tie_loss(D, M)
    assert (list(w), list(t), list(l)) == ([2, 1], [1, 1], [1, 1])
