"""The gate on 0/1 metrics (issue 38, item 1): tied pairs must not pin the lower bound to
the observed mean. The cluster-aware Tango score bound accounts for changes not yet seen."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ablate.components.stats.binary_bound import binary_columns, tango_lower
from ablate.components.stats.clusters import cluster_sums
from ablate.components.stats.noninferiority import INCONCLUSIVE, PASS, non_inferiority


def test_the_issue_reproduction_24_unchanged_questions_do_not_pass():
    D = np.zeros((24, 1))
    r = non_inferiority(D, D == 0, None, 0.02, m=3)
    assert r.verdict == [INCONCLUSIVE]
    assert r.lower[0] < -0.1          # 24 ties rule out no drop smaller than ~0.16
    assert r.margin_n[0] > 0.02
    assert r.needed_n[0] > 200        # about z^2 (1 - D) / D questions


def test_one_win_in_24_does_not_pass_a_small_margin():
    D = np.zeros((24, 1))
    D[3, 0] = 1.0
    assert non_inferiority(D, np.ones_like(D, bool), None, 0.02, m=3).verdict != [PASS]


def test_tango_bound_matches_the_closed_form_with_no_change_and_independent_questions():
    from scipy.special import ndtri
    n = 50
    D = np.zeros((n, 1))
    M = np.ones_like(D, bool)
    S, N = cluster_sums(D, M, np.arange(n))
    low, _ = tango_lower(D, M, S, N, 0.05 / 3)
    z = ndtri(1 - 0.05 / 3)
    assert low[0] == pytest.approx(-z * z / (n + z * z), rel=1e-6)


def test_tango_bound_matches_a_brute_force_constrained_likelihood_score_bound():
    # the oracle: the loss rate maximising the multinomial likelihood under Delta0, found
    # numerically, and Z = (b - c - n Delta0) / sqrt(n (2 q + Delta0 (1 - Delta0))) solved
    # for Z = z(1 - a) (independent pairs: the cluster-robust part is the smaller here)
    from scipy.optimize import brentq, minimize_scalar
    from scipy.special import ndtri
    n, b, c = 44, 1, 7

    def z(d0: float) -> float:
        def nll(q: float) -> float:
            return -(b * np.log(q + d0) + c * np.log(q) + (n - b - c) * np.log(1 - 2 * q - d0))
        q = minimize_scalar(nll, bounds=(max(0.0, -d0) + 1e-12, (1 - d0) / 2 - 1e-12),
                            method="bounded", options={"xatol": 1e-14}).x
        return (b - c - n * d0) / np.sqrt(n * (2 * q + d0 * (1 - d0)))

    want = brentq(lambda d: z(d) - ndtri(0.975), -0.99, (b - c) / n)
    D = np.r_[np.ones(b), -np.ones(c), np.zeros(n - b - c)][:, None]
    M = np.ones_like(D, bool)
    S, N = cluster_sums(D, M, np.arange(n))
    low, _ = tango_lower(D, M, S, N, 0.025)
    assert low[0] == pytest.approx(want, abs=1e-6)


def test_binary_columns_are_the_ones_with_differences_in_minus_one_zero_one():
    D = np.array([[1.0, 0.5, 0.0], [0.0, 0.0, 0.0], [-1.0, 1.0, 0.0]])
    assert list(binary_columns(D, np.ones_like(D, bool))) == [True, False, True]


def _binary_study(rng, n, g, rate, drop, reps):
    """reps studies of n questions in g documents: each document has its own change rate
    (beta-distributed around `rate`), a change is a loss with the probability that makes
    the true mean difference -drop."""
    codes = np.repeat(np.arange(g), -(-n // g))[:n]
    doc_rate = rng.beta(2.0, 2.0 * (1 - rate) / rate, (g, reps))
    changed = rng.random((n, reps)) < doc_rate[codes]
    p_loss = 0.5 + drop / (2 * rate)
    loss = rng.random((n, reps)) < p_loss
    return np.where(changed, np.where(loss, -1.0, 1.0), 0.0), codes


@pytest.mark.parametrize("n,g,rate", [(24, 24, 0.04), (24, 6, 0.1), (200, 40, 0.04),
                                      (500, 100, 0.2)])
def test_passes_at_most_alpha_over_m_at_a_true_drop_equal_to_the_margin(n, g, rate):
    rng = np.random.default_rng([n, g, int(rate * 100)])
    reps, margin, m = 400, 0.02, 3
    D, codes = _binary_study(rng, n, g, rate, margin, reps)
    r = non_inferiority(D, np.ones_like(D, bool), None if g == n else codes, margin,
                        alpha=0.05, m=m, resamples=500, seed=0)
    rate_pass = np.mean([v == PASS for v in r.verdict])
    assert rate_pass <= 0.05 / m + 3 * math.sqrt(0.05 / m / reps), rate_pass


def test_a_binary_metric_that_did_not_change_still_passes_with_enough_questions():
    rng = np.random.default_rng(3)
    D, codes = _binary_study(rng, 3000, 300, 0.05, 0.0, 40)
    r = non_inferiority(D, np.ones_like(D, bool), codes, 0.03, alpha=0.05, m=1,
                        resamples=500, seed=0)
    assert np.mean([v == PASS for v in r.verdict]) >= 0.8
