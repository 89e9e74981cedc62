"""The inversion interval's bisection (ablate.components.stats.inversion) with the same
decision at every step and a fraction of the counting.

Each step keeps or rejects the bracket's midpoint t by the count of sign patterns that
are a hit, |a - t c| >= observed(t) - tol(t), with observed(t) = |TS - t TN| and tol(t)
= REL_TOL sum_g |S_g - t N_g| + 1e-300 (SignPatterns.threshold); that is, where
g(t) + tol(t) >= 0 with g(t) = |a - t c| - observed(t). Over a bracket [lo, hi] (which
bisection only shrinks) that does not hold theta = TS / TN inside (theta is at most an
end of a bisection's bracket), observed is linear, so g is linear where a - t c keeps its
sign, and convex where it changes sign, at r: g is greatest at an end, and least at an
end too, since |c| <= TN (N_g >= 0) puts g at the end on theta's far side at most g(r)
(say theta <= lo < r: |a - hi c| = |c| (hi - r) <= TN (hi - r) = observed(hi) -
observed(r), and g(r) = -observed(r)). tol is convex: greatest at an end, least at a
weighted median of S_g / N_g (weights N_g) clipped into the bracket. So a pattern is a
hit at every t of the bracket when min(g(lo), g(hi)) + min(tol) > margin, and a miss at
every t when max(g(lo), g(hi)) + max(tol) < -margin: it is then counted once (a hit) or
dropped (a miss). The margin is
MARGIN times sum_g |S_g| + T sum_g N_g (T: the largest |t| of the bracket), which bounds
every magnitude involved (|a|, |t c|, |TS|, |t TN|, the spread); the rounding of
pvalue's expression and of these bounds is a few units of 2^-52 of it, some 10^5 times
less than the margin, so rounding cannot make pvalue decide otherwise than a bound
called sure. Bounding g, the difference with observed(t), as a whole (not each side
alone) is what decides the patterns that tie with the observed statistic (the identity
pattern, and every pattern that only flips clusters a column does not use), whose gap
is tol itself.

The undecided patterns are evaluated at each step with pvalue's very expression
(elementwise IEEE operations: the same bits on a subset), so the counts, the p-values,
the decisions and therefore the endpoints are those of the full count
(tests/components/stats/test_inversion_prune.py).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ablate.components.stats.signflip import REL_TOL


class SignPatterns(Protocol):
    """What this module reads of ablate.components.stats.inversion.SignPatterns (named
    here, not imported: inversion imports this module)."""

    S: np.ndarray
    N: np.ndarray
    total_s: np.ndarray
    total_n: np.ndarray
    a_t: np.ndarray
    c_t: np.ndarray
    zero: np.ndarray

    def pvalue(self, t: np.ndarray, cols: np.ndarray) -> np.ndarray: ...

    def threshold(self, t: np.ndarray, cols: np.ndarray) -> np.ndarray: ...

    def p_of(self, hits: np.ndarray) -> np.ndarray: ...

    def _zero_hits(self, t: np.ndarray, threshold: np.ndarray, cols: np.ndarray) -> np.ndarray: ...

MARGIN = 1e-10     # relative slack before a pattern counts as decided on a bracket
FULL_STEPS = 8     # bisection steps counting every pattern before the first pruning
PRUNE_EVERY = 4    # steps between prunings of the undecided patterns
BLOCK_COLUMNS = 16  # columns of patterns decided in one pass at the first pruning


def _spread(S: np.ndarray, N: np.ndarray, t: np.ndarray) -> np.ndarray:
    return np.abs(S - t * N).sum(axis=0)


def _least_spread(S: np.ndarray, N: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Per column, the least of sum_g |S_g - t N_g| over [lo, hi]: the convex sum is least
    at a weighted median of S_g / N_g (weights N_g >= 0), clipped into the bracket."""
    r = np.divide(S, N, out=np.zeros_like(S), where=N > 0)
    order = np.argsort(r, axis=0)
    w = np.take_along_axis(N, order, axis=0).cumsum(axis=0)
    k = np.argmax(w >= 0.5 * w[-1], axis=0)
    median = np.take_along_axis(r, order, axis=0)[k, np.arange(r.shape[1])]
    return _spread(S, N, np.clip(median, lo, hi))


def _decide(a: np.ndarray, c: np.ndarray, lo: np.ndarray, hi: np.ndarray,
            bounds: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(hit, miss): the patterns (a, c) that are a hit, or a miss, at every t in [lo, hi];
    lo, hi and `bounds` (Undecided.bounds) broadcast against a and c."""
    obs_lo, obs_hi, tol_min, tol_max, margin = bounds
    g_lo = np.abs(a - lo * c) - obs_lo
    g_hi = np.abs(a - hi * c) - obs_hi
    hit = np.minimum(g_lo, g_hi) + tol_min > margin
    miss = np.maximum(g_lo, g_hi) + tol_max < -margin
    return hit, miss


class Undecided:
    """The patterns of columns where some question differs that no bracket has decided
    yet, flat and ordered by column (`k` the position in cols, `a`, `c` the pattern
    sums), and the hits decided so far per column (`base`). Columns where no question
    differs are left to SignPatterns' own shortcut (few distinct c to count)."""

    def __init__(self, pat: SignPatterns, cols: np.ndarray, lo: np.ndarray, hi: np.ndarray):
        """Every pattern of the columns, less those [lo, hi] decides (a block of columns
        at a time, in cache)."""
        self.pat, self.cols = pat, cols
        self.base = np.zeros(cols.size, dtype=np.int64)
        rows = np.flatnonzero(~pat.zero[cols])
        bounds = self.bounds(lo, hi)
        parts: list[tuple[np.ndarray, ...]] = []
        for start in range(0, rows.size, BLOCK_COLUMNS):
            r = rows[start:start + BLOCK_COLUMNS]
            a, c = pat.a_t[cols[r]], pat.c_t[cols[r]]
            hit, miss = _decide(a, c, lo[r, None], hi[r, None], tuple(b[r, None] for b in bounds))
            self.base[r] = np.count_nonzero(hit, axis=1)
            keep = ~(hit | miss)
            parts.append((np.repeat(r, np.count_nonzero(keep, axis=1)), a[keep], c[keep]))
        self.k, self.a, self.c = (np.concatenate([p[i] for p in parts]) if parts else
                                  np.zeros(0, dtype=np.int64 if i == 0 else np.float64)
                                  for i in range(3))

    def bounds(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, ...]:
        """Per column, over [lo, hi]: observed at the ends, the least and greatest tol,
        and the margin (infinite, deciding nothing, where the bracket holds TS / TN
        inside, where observed has its kink: never a bisection's bracket; and where some
        N_g < 0: never a count)."""
        pat, cols = self.pat, self.cols
        S, N = pat.S[:, cols], pat.N[:, cols]
        ts, tn = pat.total_s[cols], pat.total_n[cols]
        tol_min = REL_TOL * _least_spread(S, N, lo, hi) + 1e-300
        tol_max = REL_TOL * np.maximum(_spread(S, N, lo), _spread(S, N, hi)) + 1e-300
        big_t = np.maximum(np.abs(lo), np.abs(hi))
        margin = MARGIN * (np.abs(S).sum(axis=0) + big_t * np.abs(N).sum(axis=0))
        e_lo, e_hi = ts - lo * tn, ts - hi * tn
        inside = np.sign(e_lo) * np.sign(e_hi) < 0
        margin[inside | np.any(N < 0, axis=0) | ~np.isfinite(margin)] = np.inf
        return np.abs(e_lo), np.abs(e_hi), tol_min, tol_max, margin

    def prune(self, lo: np.ndarray, hi: np.ndarray) -> None:
        """Count and drop the undecided patterns that are a hit, or a miss, at every t in
        [lo, hi] (per position of cols, lo <= hi)."""
        k = self.k
        hit, miss = _decide(self.a, self.c, lo[k], hi[k], tuple(b[k] for b in self.bounds(lo, hi)))
        self.base += np.bincount(k[hit], minlength=self.cols.size)
        keep = ~(hit | miss)
        self.k, self.a, self.c = k[keep], self.a[keep], self.c[keep]

    def hits(self, t: np.ndarray, threshold: np.ndarray) -> np.ndarray:
        """SignPatterns._hits(t, threshold, cols), from the undecided patterns."""
        hits = self.base.copy()
        zero = self.pat.zero[self.cols]
        if zero.any():
            hits[zero] = self.pat._zero_hits(t[zero], threshold[zero], self.cols[zero])
        x = t[self.k] * self.c
        np.subtract(self.a, x, out=x)
        np.abs(x, out=x)
        hits += np.bincount(self.k[x >= threshold[self.k]], minlength=self.cols.size)
        return hits


def pruned_endpoint(pat: SignPatterns, cols: np.ndarray, inner: np.ndarray,
                    outer: np.ndarray, level: np.ndarray, steps: int) -> np.ndarray:
    """inversion's plain bisection (the last kept shift between inner and outer, `steps`
    halvings), counting every pattern for the first FULL_STEPS steps and from then on only
    the patterns the bracket leaves undecided."""
    inner, outer = inner.copy(), outer.copy()
    left: Undecided | None = None
    for step in range(steps):
        mid = 0.5 * (inner + outer)
        if step < FULL_STEPS:
            p = pat.pvalue(mid, cols)
        else:
            lo, hi = np.minimum(inner, outer), np.maximum(inner, outer)
            if left is None:
                left = Undecided(pat, cols, lo, hi)
            elif (step - FULL_STEPS) % PRUNE_EVERY == 0:
                left.prune(lo, hi)
            threshold = pat.threshold(mid, cols)
            p = pat.p_of(left.hits(mid, threshold))
        keep = p > level
        inner = np.where(keep, mid, inner)
        outer = np.where(keep, outer, mid)
    return inner
