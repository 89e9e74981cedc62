"""Sign-flip test against independent references: brute-force enumeration in exact
decimal arithmetic, integer convolution, scipy's binomtest (exact McNemar on 0/1 data)
and the Monte-Carlo error bound."""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats as sps

from ablate.components.stats.signflip import (
    enum_pvalue,
    grid_pvalue,
    grid_steps,
    montecarlo_pvalues,
    sign_matrix_blocks,
    signflip_pvalues,
)


def brute_p(d) -> float:
    """Exact p over all 2^n sign patterns, in exact decimal arithmetic."""
    fr = [Fraction(repr(float(x))) for x in d]
    obs = abs(sum(fr))
    hits = sum(abs(sum(s * x for s, x in zip(signs, fr))) >= obs
               for signs in itertools.product((1, -1), repeat=len(fr)))
    return hits / 2 ** len(fr)


def convolution_p(k) -> float:
    """Exact p for integer steps by a dict convolution with Python integers."""
    dist = Counter({0: 1})
    for x in k:
        new: Counter = Counter()
        for s, c in dist.items():
            new[s + x] += c
            new[s - x] += c
        dist = new
    obs = abs(sum(k))
    return sum(c for s, c in dist.items() if abs(s) >= obs) / 2 ** len(k)


@pytest.mark.parametrize("seed", range(5))
def test_enumeration_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    d = np.round(rng.normal(0.2, 1.0, 11), 6)
    assert enum_pvalue(d) == pytest.approx(brute_p(d), abs=1e-12)


def test_enumeration_counts_float_ties():
    # 0.1 + 0.2 - 0.3 + 0.3 == -0.1 - 0.2 + 0.3 + 0.3 in decimals, not in floats
    d = np.array([0.1, 0.2, -0.3, 0.3, 0.7, -0.4])
    assert enum_pvalue(d) == pytest.approx(brute_p(d), abs=1e-12)
    p, method = signflip_pvalues(d[:, None], resamples=100)
    assert method == ["exact-grid"] and p[0] == pytest.approx(brute_p(d), abs=1e-12)


def test_zero_differences_do_not_count():
    d = np.array([0.0, 0.5, 0.0, -0.25, 0.75, 0.0])
    p, _ = signflip_pvalues(d[:, None], resamples=100)
    assert p[0] == pytest.approx(brute_p([0.5, -0.25, 0.75]))
    p, method = signflip_pvalues(np.zeros((5, 1)), resamples=100)
    assert p[0] == 1.0


@pytest.mark.parametrize("n,p_win", [(40, 0.5), (300, 0.6), (1000, 0.53)])
def test_binary_equals_exact_mcnemar_binomtest(n, p_win):
    rng = np.random.default_rng(n)
    d = rng.choice([-1.0, 0.0, 1.0], size=n, p=[1 - p_win - 0.2, 0.2, p_win])
    p, method = signflip_pvalues(d[:, None], resamples=1000)
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    ref = sps.binomtest(wins, wins + losses, 0.5).pvalue
    assert method == ["exact-grid"]
    assert p[0] == pytest.approx(ref, rel=1e-9)


def test_half_grid_matches_integer_convolution():
    rng = np.random.default_rng(3)
    a, b = rng.choice([0, 0.5, 1.0], 60), rng.choice([0, 0.5, 1.0], 60)
    d = a - b
    p, method = signflip_pvalues(d[:, None], resamples=1000)
    assert method == ["exact-grid"]
    assert p[0] == pytest.approx(convolution_p([int(round(x * 2)) for x in d if x]), rel=1e-9)


def test_reciprocal_rank_grid_is_exact():
    rng = np.random.default_rng(4)
    rr = lambda: np.where(rng.random(30) < 0.2, 0.0, 1.0 / rng.integers(1, 11, 30))
    d = rr() - rr()
    k = grid_steps(d)
    assert k is not None and np.allclose(k / 2520, d)
    p, method = signflip_pvalues(d[:, None], resamples=1000)
    assert method == ["exact-grid"]
    assert p[0] == pytest.approx(convolution_p([int(x) for x in k if x]), rel=1e-9)


def test_continuous_values_are_not_a_grid():
    rng = np.random.default_rng(5)
    assert grid_steps(rng.random(50)) is None
    assert grid_pvalue(np.array([3, -1, 2])) == pytest.approx(convolution_p([3, -1, 2]))


def test_small_continuous_sample_is_enumerated():
    rng = np.random.default_rng(6)
    d = rng.normal(0.5, 1, 10)
    p, method = signflip_pvalues(d[:, None], resamples=1000)
    assert method == ["exact-enum"] and p[0] == pytest.approx(brute_p(d), abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_monte_carlo_within_four_standard_errors(seed):
    rng = np.random.default_rng(100 + seed)
    d = rng.normal(0.35, 1.0, 18)
    B = 10_000
    p, method = signflip_pvalues(d[:, None], resamples=B, seed=seed,
                                 exact_max_patterns=2**8)
    assert method == ["monte-carlo"]
    # reference: all 2^18 patterns, written independently
    codes = np.arange(2**18)[:, None]
    signs = ((codes >> np.arange(18)) & 1) * 2.0 - 1.0
    exact = np.mean(np.abs(signs @ d) >= abs(d.sum()) - 1e-9)
    assert 0.01 < exact < 0.9
    se = np.sqrt(exact * (1 - exact) / B)
    assert abs(p[0] - exact) < 4 * se


def test_monte_carlo_never_zero_and_counts_ties():
    d = np.full(40, 1.0) + np.linspace(0, 1e-3, 40)
    p = montecarlo_pvalues(d[:, None], resamples=500, seed=0)
    assert p[0] == pytest.approx(1 / 501)
    # The observed sum (0.2) is reached by many flips, but only up to float rounding
    # (a bare >= drops about 13% of them here): all must count.
    d = np.random.default_rng(23).choice([0.1, 0.2, 0.3, -0.1, -0.2, -0.3, 0.7], 30)
    B = 20_000
    p_mc = montecarlo_pvalues(d[:, None], resamples=B, seed=1)[0]
    exact = grid_pvalue(np.rint(d * 10).astype(int))
    assert abs(p_mc - exact) < 4 * np.sqrt(exact * (1 - exact) / B)


def test_sign_matrix_is_seeded_and_prefix_stable():
    a = np.vstack(list(sign_matrix_blocks(37, 5000, seed=7)))
    b = np.vstack(list(sign_matrix_blocks(37, 9000, seed=7)))
    c = np.vstack(list(sign_matrix_blocks(37, 5000, seed=8)))
    assert set(np.unique(a)) == {-1.0, 1.0}
    assert np.array_equal(a, b[:5000]) and not np.array_equal(a, c)
    assert abs(a.mean()) < 0.01


def test_columns_are_independent_of_each_other():
    rng = np.random.default_rng(9)
    D = rng.normal(0.1, 1, (60, 3))
    p_all, _ = signflip_pvalues(D, resamples=2000, seed=3)
    p_one, _ = signflip_pvalues(D[:, [1]], resamples=2000, seed=3)
    assert p_all[1] == p_one[0]
