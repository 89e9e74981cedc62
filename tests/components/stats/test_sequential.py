"""Group-sequential looks: the Lan–DeMets O'Brien–Fleming boundaries match published
values, and under the null the chance of ever rejecting over all looks stays at alpha
(simulation over many seeds), while a real effect is stopped early."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from ablate.components.stats.sequential import (
    boundaries,
    cluster_t,
    look_sizes,
    run_looks,
    spent,
    t_boundary,
)
from ablate.components.stats.table_prep import paired_differences


def test_boundaries_match_the_published_lan_demets_obrien_fleming_values():
    # four equally spaced looks, two-sided alpha 0.05 (Jennison & Turnbull 2000, table 7.6;
    # gsDesign / rpact give 4.333, 2.963, 2.359, 2.014)
    c = boundaries((0.25, 0.5, 0.75, 1.0), 0.05)
    assert c == pytest.approx((4.333, 2.963, 2.359, 2.014), abs=2e-3)
    assert boundaries((1.0,), 0.05) == pytest.approx((1.95996,), abs=1e-4)


def test_spending_adds_up_to_alpha():
    assert spent(1.0, 0.05) == pytest.approx(0.05)
    assert spent(0.5, 0.05) < spent(0.75, 0.05) < 0.05


def _rejects(rng, n, batch, alpha, effect, binary):
    if binary:  # per-question differences of a 0/1 metric: -1, 0, +1
        d = rng.choice([-1.0, 0.0, 1.0], size=n, p=[0.15 - effect / 2, 0.7, 0.15 + effect / 2])
    else:
        d = rng.normal(effect, 1.0, n)
    return run_looks(d, look_sizes(n, batch), alpha)[-1].decided


@pytest.mark.parametrize("binary", [False, True])
def test_type_one_error_stays_at_alpha_under_repeated_looks(binary):
    rng = np.random.default_rng(20261201)
    sims = 3000
    rate = np.mean([_rejects(rng, 300, 50, 0.05, 0.0, binary) for _ in range(sims)])
    # se of a rate of 0.05 over 3000 runs is 0.004; six naive looks at 0.05 would give ~0.12
    assert rate <= 0.05 + 0.01, rate
    naive = np.mean([any(abs(np.mean(d[:n]) / (np.std(d[:n], ddof=1) / np.sqrt(n))) >= 1.96
                         for n in look_sizes(300, 50))
                     for d in (rng.normal(0, 1, 300) for _ in range(1000))])
    assert naive > 0.08  # the problem the boundaries solve


def test_a_real_effect_stops_early():
    rng = np.random.default_rng(3)
    stops = [len(run_looks(rng.normal(0.5, 1.0, 300), look_sizes(300, 50), 0.05)) for _ in range(200)]
    assert np.median(stops) <= 2  # d_z 0.5: decided after 50-100 of the 300 questions


def test_look_sizes():
    assert look_sizes(300, 50) == [50, 100, 150, 200, 250, 300]
    assert look_sizes(320, 50) == [50, 100, 150, 200, 250, 320]
    assert look_sizes(340, 50) == [50, 100, 150, 200, 250, 300, 340]
    assert look_sizes(30, 50) == [30]


# --- issue 27: the spending never underflows into a crash, and the level holds with
# t statistics on clustered questions ---------------------------------------------------

def test_the_demo_schedule_gives_finite_boundaries():
    # 4 key metrics at 500 questions, batch 50: the first look's spending is ~1e-17, which
    # 1 - cdf rounded to 0 (norm.ppf(1) = inf, then brentq on NaN: ValueError)
    c = boundaries(tuple(n / 500 for n in look_sizes(500, 50)), 0.05 / 4)
    assert len(c) == 10 and all(math.isfinite(x) for x in c)
    assert 8.0 < c[0] < 9.0 and 2.0 < c[-1] < 3.0
    assert list(c) == sorted(c, reverse=True)


def _finite(total, batch, alpha):
    sizes = look_sizes(total, batch)
    c = boundaries(tuple(n / total for n in sizes), alpha)
    assert len(c) == len(sizes)
    assert all(math.isfinite(x) and 0.0 < x <= 40.0 for x in c), (total, batch, alpha, c[:5])
    assert list(c) == sorted(c, reverse=True), (total, batch, alpha)
    return c


@pytest.mark.parametrize("alpha", [0.05, 0.05 / 4, 1e-6])
def test_every_schedule_gives_finite_boundaries(alpha):
    for total in (10, 11, 37, 99, 500, 4999):
        for batch in (10, 33, 50, 1000):
            _finite(total, batch, alpha)
    for batch in (333, 1000):
        _finite(100_000, batch, alpha)


def test_ten_thousand_looks_give_finite_boundaries():
    # the longest schedule asked for (100 000 questions, batch 10) at the smallest alpha
    c = _finite(100_000, 10, 1e-6)
    assert c[0] == 40.0 and 4.5 < c[-1] < 5.5  # early looks spend nothing; then ~z_{1-1e-6/2}


def test_boundaries_cross_at_alpha_on_brownian_paths():
    # the recursion's answer, checked by brute force: 100 looks, 40 000 simulated paths
    rng = np.random.default_rng(11)
    fr = np.array([n / 1000 for n in look_sizes(1000, 10)])
    c = np.array(boundaries(tuple(fr), 0.05))
    z = np.cumsum(rng.normal(0, 1, (40_000, fr.size)) * np.sqrt(np.diff(fr, prepend=0.0)), axis=1)
    rate = float(np.mean((np.abs(z / np.sqrt(fr)) >= c).any(axis=1)))
    assert abs(rate - 0.05) < 3 * math.sqrt(0.05 * 0.95 / 40_000), rate


def _null_rate(rng, sims, n, batch, alpha, clusters=None, icc=0.0):
    hits = 0
    for _ in range(sims):
        if clusters is None:
            d, codes = rng.normal(0.0, 1.0, n), None
        else:  # n questions over `clusters` documents, in one random (seeded) order
            codes = rng.permutation(np.repeat(np.arange(clusters), n // clusters))
            d = (rng.normal(0.0, math.sqrt(icc), clusters)[codes]
                 + rng.normal(0.0, math.sqrt(1.0 - icc), n))
        hits += run_looks(d, look_sizes(n, batch), alpha, clusters=codes)[-1].decided
    return hits / sims


def _tolerance(alpha, sims):
    return alpha + 3.0 * math.sqrt(alpha * (1.0 - alpha) / sims)


def test_type_one_error_with_t_statistics_on_small_batches():
    # batches of 10: a t statistic with 9, 19, 29 df against normal boundaries rejected too often
    rng = np.random.default_rng(27)
    rate = _null_rate(rng, 4000, 30, 10, 0.05)
    assert rate <= _tolerance(0.05, 4000), rate


@pytest.mark.parametrize("clusters", [None, 30])
def test_type_one_error_of_the_whole_procedure(clusters):
    # 300 questions, looks every 50; clustered: 30 documents x 10 questions, ICC 0.5 (a
    # question-level statistic rejects ~ a third of these nulls)
    rng = np.random.default_rng(2027)
    rate = _null_rate(rng, 2000, 300, 50, 0.05, clusters=clusters, icc=0.5)
    assert rate <= _tolerance(0.05, 2000), rate
    assert rate >= 0.02  # and the boundaries are not absurdly strict


def test_cluster_t_is_the_paired_t_on_singletons_and_counts_clusters():
    from scipy import stats as sps
    rng = np.random.default_rng(5)
    d = rng.normal(0.2, 1.0, 40)
    t, df = cluster_t(d)
    assert df == 39 and t == pytest.approx(sps.ttest_1samp(d, 0.0).statistic)
    codes = np.repeat(np.arange(8), 5)
    t, df = cluster_t(np.r_[d[:39], np.nan], codes)  # an undefined difference is dropped
    # 8 clusters, one with 4 questions: Bell-McCaffrey df just below G - 1 = 7
    assert 6.9 < df < 7 and math.isfinite(t)
    assert cluster_t(np.ones(5)) == (math.inf, 4.0)  # no spread, a non-zero mean
    assert cluster_t(np.zeros(5))[0] == 0.0
    assert math.isnan(cluster_t(np.ones(5), np.zeros(5, dtype=int))[0])  # one cluster: no test


def test_boundaries_on_the_t_scale_keep_the_one_look_tail():
    from scipy.special import ndtr, stdtr
    for c, df in ((2.0, 5.0), (4.333, 12.0), (8.6, 3.0)):
        assert 2 * stdtr(df, -t_boundary(c, df)) == pytest.approx(2 * ndtr(-c), rel=1e-6)
    assert t_boundary(2.0, 1e9) == pytest.approx(2.0, abs=1e-6)
    assert t_boundary(2.0, 0.0) == math.inf  # one cluster: nothing to test
    assert t_boundary(40.0, 30.0) == math.inf  # a look that spends nothing cannot decide


def test_a_look_that_spends_nothing_cannot_decide():
    # alpha 1e-6 at 1 % of 100 000 questions: the spending underflows to 0; even an exact
    # effect (zero spread, t = inf) does not stop there
    total = 100_000
    sizes = look_sizes(total, 1000)
    c = boundaries(tuple(n / total for n in sizes), 1e-6)
    assert c[0] == 40.0
    looks = run_looks(np.ones(total), sizes, 1e-6)
    assert not looks[0].decided and len(looks) > 1


def test_paired_differences_keep_the_cluster():
    pq = pl.DataFrame({
        "variant": ["baseline"] * 4 + ["v"] * 4,
        "qid": ["a", "b", "c", "d"] * 2,
        "cluster": ["x", "x", "z", "y"] * 2,
        "m/s": [0.0, 1.0, 0.5, None, 1.0, 1.0, 0.0, 1.0]})
    d, labels = paired_differences(pq, "baseline", "v", "m/s", "cluster")
    ok = np.isfinite(d)
    assert sorted(d[ok].tolist()) == [-0.5, 0.0, 1.0]  # d has no defined baseline: undefined
    by = dict(zip(d[ok].tolist(), labels[ok].tolist()))
    assert by[1.0] == by[0.0] == "x" != by[-0.5]  # a and b share "x"
    assert cluster_t(d, labels)[1] == 1.0  # two clusters used: df 1
    d1, codes1 = paired_differences(pq, "baseline", "v", "m/s", None)
    assert sorted(d1[np.isfinite(d1)].tolist()) == [-0.5, 0.0, 1.0] and codes1 is None
    assert cluster_t(d1, codes1)[1] == 2.0  # three questions: the paired t
