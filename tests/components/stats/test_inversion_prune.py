"""The pruned bisection (ablate.components.stats.inversion_prune) makes the plain
bisection's decisions: the same endpoints and flags, bit for bit, and the same hit counts
at every shift of a bracket it has pruned on."""

from __future__ import annotations

import numpy as np
import pytest

from ablate.components.stats import inversion_prune as prune
from ablate.components.stats.clusters import cluster_sums
from ablate.components.stats.inversion import (
    BISECT_STEPS,
    SignPatterns,
    _endpoint,
    inversion_interval,
)
from ablate.components.stats.signflip import REL_TOL


def _case(rng: np.random.Generator, g: int, ncol: int, scale: float, weighted: bool):
    """(D, M, S, N) of ncol columns over g clusters: ties (most differences 0 on some
    columns), columns where no question differs, every scale, optionally weighted N."""
    q = g * 3
    codes = rng.integers(0, g, size=q)
    codes[:g] = np.arange(g)
    D = rng.choice([-1.0, 0.0, 1.0], size=(q, ncol), p=[0.2, 0.6, 0.2])
    D[:, ::3] = rng.normal(size=(q, ncol))[:, ::3].round(2)       # graded, with ties
    D[:, 1::5] = 0.0                                              # no question differs
    D *= scale * rng.choice([1.0, 1e-3, 1e3], size=ncol)
    M = rng.random((q, ncol)) < 0.9
    M[:g] = True
    if not weighted:
        S, N = cluster_sums(D, M, codes)
        return D, M, S, N
    w = rng.uniform(0.25, 3.0, size=(q, 1)) * M
    S, _ = cluster_sums(D * w, M, codes)
    N, _ = cluster_sums(w, M, codes)
    return D, M, S, N


CASES = [  # clusters, columns, scale, weighted: enumerated (2^G <= 2^14), then Monte-Carlo
    (3, 12, 1.0, False), (6, 30, 1.0, False), (9, 30, 1e-9, True), (14, 20, 1.0, False),
    (16, 30, 1.0, False), (16, 24, 1e9, True), (40, 30, 1e-150, False), (40, 20, 1e150, True)]


@pytest.mark.parametrize("full_steps,every", [(prune.FULL_STEPS, prune.PRUNE_EVERY), (0, 1)])
def test_pruned_intervals_equal_the_plain_bisection(monkeypatch, full_steps, every):
    # (0, 1): pruned from the first step, on the widest brackets, and at every step
    monkeypatch.setattr(prune, "FULL_STEPS", full_steps)
    monkeypatch.setattr(prune, "PRUNE_EVERY", every)
    rng = np.random.default_rng(11)
    for g, ncol, scale, weighted in CASES:
        D, M, S, N = _case(rng, g, ncol, scale, weighted)
        level = rng.choice([0.001, 0.01, 0.05, 0.2], size=ncol)
        for reject0 in (None, rng.random(ncol) < 0.5):
            want = inversion_interval(D, M, S, N, level, reject0, resamples=2000, seed=3,
                                      plain=True)
            got = inversion_interval(D, M, S, N, level, reject0, resamples=2000, seed=3)
            assert np.array_equal(got[0], want[0], equal_nan=True), (g, scale, weighted)
            assert np.array_equal(got[1], want[1], equal_nan=True), (g, scale, weighted)
            assert got[2] == want[2]
            assert g < 9 or np.isfinite(got[0]).any()  # G = 3: too few clusters to reject


def test_pruned_endpoint_on_any_bracket(monkeypatch):
    # brackets the interval never asks for: either way round, across the estimate
    monkeypatch.setattr(prune, "FULL_STEPS", 2)
    monkeypatch.setattr(prune, "PRUNE_EVERY", 1)
    rng = np.random.default_rng(12)
    for g, ncol, scale, weighted in CASES:
        D, M, S, N = _case(rng, g, ncol, scale, weighted)
        pat = SignPatterns(S, N, resamples=2000, seed=4)
        cols = np.arange(ncol)
        theta = S.sum(axis=0) / N.sum(axis=0)
        spread = scale * 2.0
        for inner in (theta, theta - spread * rng.random(ncol), rng.normal(scale=spread, size=ncol)):
            outer = inner + rng.normal(scale=spread, size=ncol)
            level = rng.choice([0.01, 0.05, 0.3], size=ncol)
            want = _endpoint(pat, cols, inner, outer, level, plain=True)
            got = prune.pruned_endpoint(pat, cols, inner, outer, level, BISECT_STEPS)
            assert np.array_equal(got, want), (g, scale, weighted)


def test_undecided_counts_equal_the_full_count_inside_the_bracket():
    rng = np.random.default_rng(13)
    for g, ncol, scale, weighted in CASES:
        D, M, S, N = _case(rng, g, ncol, scale, weighted)
        pat = SignPatterns(S, N, resamples=2000, seed=5)
        cols = np.arange(ncol)
        theta = S.sum(axis=0) / N.sum(axis=0)
        lo = theta + rng.choice([0.0, 1.0], size=ncol) * rng.normal(scale=scale, size=ncol)
        hi = lo + rng.random(ncol) * scale * 1e-3 * rng.choice([1.0, 1e-6], size=ncol)
        left = prune.Undecided(pat, cols, lo, hi)
        decided = np.flatnonzero(~pat.zero)
        assert left.k.size < decided.size * pat.patterns  # something was decided
        for u in (0.0, 1.0, *rng.random(6)):
            t = lo + u * (hi - lo)
            threshold = pat.threshold(t, cols)
            assert np.array_equal(left.hits(t, threshold), pat._hits(t, threshold, cols))


def test_least_spread_is_the_least_over_the_bracket():
    rng = np.random.default_rng(14)
    S = rng.normal(size=(9, 50)).round(1)
    N = rng.integers(0, 4, size=(9, 50)).astype(float) * rng.choice([1.0, 0.37], size=50)
    S[N == 0] = 0.0
    lo = rng.normal(size=50)
    hi = lo + rng.random(50) * rng.choice([0.01, 3.0], size=50)
    grid = lo + np.linspace(0.0, 1.0, 2001)[:, None] * (hi - lo)
    kinks = np.divide(S, N, out=np.full_like(S, np.nan), where=N > 0)
    inside = np.where((kinks >= lo) & (kinks <= hi), kinks, lo)
    candidates = np.vstack([grid, inside])
    brute = np.abs(S[None] - candidates[:, None, :] * N[None]).sum(axis=1).min(axis=0)
    least = prune._least_spread(S, N, lo, hi)
    assert np.allclose(least, brute, rtol=1e-12, atol=1e-12)


def test_near_ties_that_change_over_the_bracket_stay_undecided():
    # cluster 0 sums eps with no count: flipping it alone moves |a - t c| by 2 eps from
    # observed, a hit exactly where tol(t) >= 2 eps; eps is tol halfway along a wide
    # bracket, so that pattern is a hit on one part of the bracket and a miss on the other
    rng = np.random.default_rng(15)
    g, ncol = 8, 12
    S = rng.normal(size=(g, ncol)).round(2)
    N = rng.integers(1, 4, size=(g, ncol)).astype(float)
    S[0], N[0] = 0.0, 0.0
    theta = S.sum(axis=0) / N.sum(axis=0)
    width = 10.0 * np.abs(S[1:] / N[1:]).max()
    lo, hi = theta - 3 * width, theta - width
    mid = 0.5 * (lo + hi) + rng.uniform(-0.3, 0.3, size=ncol) * width
    S[0] = 0.5 * REL_TOL * np.abs(S - mid * N).sum(axis=0)
    pat = SignPatterns(S, N, resamples=2000, seed=6)
    assert pat.exact
    cols = np.arange(ncol)
    left = prune.Undecided(pat, cols, lo, hi)
    counts = []
    for u in np.linspace(0.0, 1.0, 41):
        t = lo + u * (hi - lo)
        threshold = pat.threshold(t, cols)
        want = pat._hits(t, threshold, cols)
        assert np.array_equal(left.hits(t, threshold), want)
        counts.append(want)
    assert np.all(np.ptp(counts, axis=0) > 0)  # the near ties do change over the bracket
