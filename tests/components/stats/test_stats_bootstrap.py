"""Bootstrap CIs: percentile definition, BCa against scipy, clusters, fallbacks."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from ablate.components.stats.bootstrap import FLAG_BCA_UNDEFINED, bootstrap_ci, bootstrap_means


def test_percentile_is_quantile_of_resampled_means():
    rng = np.random.default_rng(0)
    d = rng.normal(0.1, 1, 30)
    boot = bootstrap_means(d[:, None], np.ones((30, 1), bool), np.arange(30), 4000, seed=5)
    # each row is the mean of a resample of 30 questions drawn with replacement
    assert boot.shape == (4000, 1)
    assert boot.mean() == pytest.approx(d.mean(), abs=4 * d.std() / np.sqrt(30 * 4000))
    assert boot.std() == pytest.approx(d.std() / np.sqrt(30), rel=0.05)
    lo, hi, method, flag = bootstrap_ci(d[:, None], np.ones((30, 1), bool), alpha=0.1,
                                        resamples=4000, method="percentile")
    assert method == ["percentile"] and flag == [""]
    assert lo[0] < d.mean() < hi[0]


@pytest.mark.parametrize("seed", [0, 1])
def test_bca_close_to_scipy(seed):
    rng = np.random.default_rng(seed)
    d = rng.exponential(1.0, 40) - 0.8       # skewed, so BCa differs from percentile
    lo, hi, method, _ = bootstrap_ci(d[:, None], np.ones((40, 1), bool),
                                     resamples=20_000, seed=seed)
    ref = sps.bootstrap((d,), np.mean, n_resamples=20_000, method="BCa",
                        random_state=np.random.default_rng(seed)).confidence_interval
    width = ref.high - ref.low
    assert method == ["bca"]
    assert lo[0] == pytest.approx(ref.low, abs=0.03 * width)
    assert hi[0] == pytest.approx(ref.high, abs=0.03 * width)


def test_clustered_equals_plain_with_singleton_clusters():
    rng = np.random.default_rng(2)
    D = rng.normal(0, 1, (50, 4))
    M = rng.random((50, 4)) > 0.1
    M[:, 1] = M[:, 0]
    D = np.where(M, D, 0.0)
    labels = np.array([f"doc{i}" for i in rng.permutation(50)])
    plain = bootstrap_ci(D, M, resamples=3000, seed=4)
    clustered = bootstrap_ci(D, M, clusters=labels, resamples=3000, seed=4)
    for a, b in zip(plain[:2], clustered[:2]):
        assert np.array_equal(a, b)


def test_clusters_widen_the_interval_when_questions_are_correlated():
    rng = np.random.default_rng(3)
    clusters = np.repeat(np.arange(10), 10)
    d = rng.normal(0, 1, 10)[clusters] + rng.normal(0, 0.1, 100)
    M = np.ones((100, 1), bool)
    lo_p, hi_p, *_ = bootstrap_ci(d[:, None], M, resamples=4000, method="percentile")
    lo_c, hi_c, *_ = bootstrap_ci(d[:, None], M, clusters=clusters, resamples=4000,
                                  method="percentile")
    assert (hi_c - lo_c)[0] > 2 * (hi_p - lo_p)[0]


def test_bca_undefined_falls_back_to_percentile_with_flag():
    D = np.column_stack([np.full(20, 0.5), np.r_[1.0, np.zeros(19)], np.r_[1.0, np.zeros(19)]])
    M = np.ones_like(D, dtype=bool)
    M[1:, 2] = False                           # one used question
    lo, hi, method, flag = bootstrap_ci(D, M, resamples=2000)
    # constant differences (no jackknife spread) and a single question: undefined
    assert [method[0], method[2]] == ["percentile"] * 2
    assert [flag[0], flag[2]] == [FLAG_BCA_UNDEFINED] * 2
    assert (lo[0], hi[0]) == (0.5, 0.5) and (lo[2], hi[2]) == (1.0, 1.0)
    # one non-zero value out of 20: skewed but defined
    assert method[1] == "bca" and flag[1] == ""
    assert lo[1] == 0.0 and hi[1] > 0.0


def test_seeded_and_independent_of_other_columns():
    rng = np.random.default_rng(4)
    D = rng.normal(0, 1, (40, 3))
    M = np.ones_like(D, dtype=bool)
    a = bootstrap_ci(D, M, resamples=2000, seed=1)
    b = bootstrap_ci(D[:, [2]], M[:, [2]], resamples=2000, seed=1)
    c = bootstrap_ci(D, M, resamples=2000, seed=2)
    # same resamples whatever the other columns (BLAS may round differently: 1e-12)
    assert a[0][2] == pytest.approx(b[0][0], rel=1e-12)
    assert a[1][2] == pytest.approx(b[1][0], rel=1e-12)
    assert a[0][2] != c[0][2]
    assert np.isnan(bootstrap_ci(D, np.zeros_like(M), resamples=10)[0]).all()


def test_undefined_questions_domain_bootstrap():
    rng = np.random.default_rng(5)
    d = rng.normal(0.2, 1.0, 60)
    M = np.ones((60, 3), bool)
    M[40:, 1] = False                      # metric undefined on a third of questions
    M[1:, 2] = False                       # a single used question
    D = np.where(M, d[:, None], 0.0)
    boot = bootstrap_means(D, M, np.arange(60), 3000, seed=1)
    # column 1 is the mean over the resampled *used* questions only
    assert boot[:, 1].mean() == pytest.approx(d[:40].mean(), abs=0.02)
    assert boot[:, 1].std() == pytest.approx(d[:40].std() / np.sqrt(40), rel=0.1)
    assert np.isnan(boot[:, 2]).any() and np.isfinite(boot[:, 2]).any()
    lo, hi, method, _ = bootstrap_ci(D, M, resamples=3000, seed=1)
    assert lo[1] < d[:40].mean() < hi[1] and (lo[2], hi[2]) == (d[0], d[0])
    assert method[2] == "percentile"
    alone = bootstrap_ci(D[:, [1]], M[:, [1]], resamples=3000, seed=1)
    assert alone[0][0] == pytest.approx(lo[1], rel=1e-12)
