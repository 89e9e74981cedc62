"""The default interval: the inversion of the sign-flip test itself, over clusters.

The (1 - a) interval of the mean difference theta is every shift t that the two-sided
sign-flip test of the shifted differences d - t does not reject at level a. Every used
pair is shifted (ties included: a tied pair's difference becomes -t), and the test works
on cluster sums S_g(t) = S_g - t N_g with statistic |sum_g S_g(t)|, as the p-value does
(ablate.components.stats.signflip applied to cluster sums). So, by construction:

- the interval contains its estimate (at t = theta the statistic is 0 and p = 1);
- it is never zero-width when pairs differ (six wins among thirty pairs is an interval
  around 0.2, not [0.2, 0.2]);
- "significant" and "the interval excludes 0" never disagree: the caller passes the
  level a_j = alpha * p_j / p_adjusted_j at which the raw test rejects exactly when the
  corrected p is at most alpha, and whether it rejects at 0; the search for each endpoint
  is bracketed on the side of 0 that decision implies. Since a_j <= alpha, each interval
  is at least as wide as the unadjusted 1 - alpha one (its coverage is at least 1 - alpha).

p(t) uses one set of sign patterns for all shifts and columns: every pattern over the G
clusters when 2^G is at most EXACT_PATTERNS (exact), else the Monte-Carlo sign matrix of
signflip (same seed), p = (c + 1) / (B + 1). Each endpoint is found by bisection between
a shift the test keeps and one it rejects (beyond the most extreme difference only the
all-equal-sign patterns are as extreme, p = 2 / 2^G); with too few clusters to reject
anything (G <= 5 at 0.05) the side is unbounded and the endpoint is NaN. After its first
steps the bisection counts only the patterns its bracket leaves undecided
(ablate.components.stats.inversion_prune): the same decisions, so the same endpoints.

Method: test inversion (Lehmann & Romano, Testing Statistical Hypotheses, 3.5); for
randomisation tests, Garthwaite 1996, "Confidence intervals from randomization tests".
"""

from __future__ import annotations

import numpy as np

from ablate.components.stats.inversion_prune import pruned_endpoint
from ablate.components.stats.signflip import REL_TOL, sign_matrix_blocks

EXACT_PATTERNS = 2**14   # enumerate every sign pattern of the clusters up to this many
BISECT_STEPS = 48        # halvings of the bracket (2^-48 of the data's range)
FLAG_UNBOUNDED = "too_few_clusters_unbounded"
BLOCK_COLUMNS = 16        # columns of the pattern sums counted in one pass (in cache)


def all_signs(g: int) -> np.ndarray:
    """Every sign pattern of g clusters (2^g x g, +-1.0), pattern k's signs its bits."""
    codes = np.arange(2**g, dtype=np.int64)[:, None]
    return ((codes >> np.arange(g)) & 1) * 2.0 - 1.0


def count_dtype(N: np.ndarray) -> type:
    """How c = signs @ N is held: int16 when N is whole and a column's sum of |N_g| is at
    most int16's largest (then every c is a whole number int16 holds, and int16 -> float64
    is exact: t * c is the same float64 product), else float64."""
    if N.size and np.all(N == np.rint(N)) and np.abs(N).sum(axis=0).max() <= np.iinfo(np.int16).max:
        return np.int16
    return np.float64


class SignPatterns:
    """a = signs @ S and c = signs @ N for every pattern and column: enough to evaluate
    the sign-flip p of any shift of every column. Stored column by column (`a_t`, `c_t`:
    columns x patterns), so a block of columns is contiguous: pvalue counts each block's
    hits in one pass over its memory, computing every element as
    `np.abs(a - t * c) >= observed - tol` does, so the counts are the same. c is held as
    int16 where that is exact (count_dtype): a quarter of the memory (the demo's 62 MB of
    c, whose first touch cost up to 0.2 s), the same float64 values wherever it is used. On one
    thread: sharing the blocks out over threads made the demo's intervals slower on 2
    busy cores (2026-12-04), and the pruned bisection counts every pattern at few steps."""

    def __init__(self, S: np.ndarray, N: np.ndarray, resamples: int, seed: int):
        g = S.shape[0]
        self.exact = 2**g <= EXACT_PATTERNS
        # each block's products (signs @ S: the same calls, so the same bits, as one
        # matrix of every pattern) are written transposed into place: no concatenated
        # patterns x columns copies to transpose (most of the demo's set-up time)
        blocks = [all_signs(g)] if self.exact else sign_matrix_blocks(g, resamples, seed)
        self.patterns = 2**g if self.exact else resamples
        self.a_t = np.empty((S.shape[1], self.patterns))
        self.c_t = np.empty((S.shape[1], self.patterns), dtype=count_dtype(N))
        done = 0
        for signs in blocks:
            rows = slice(done, done + signs.shape[0])
            self.a_t[:, rows] = (signs @ S).T
            self.c_t[:, rows] = (signs @ N).T
            done += signs.shape[0]
        assert done == self.patterns
        self.S, self.N = S, N
        self.total_s, self.total_n = S.sum(axis=0), N.sum(axis=0)
        # a column where no question differs (every S_g = 0: a = 0 for every pattern, the
        # hits depend on c alone) is counted once per distinct c, weighted by how many
        # patterns share it: the same outcome for each, so the same counts, at a fraction
        # of the work (a third of the demo's columns: variants that cannot change a metric).
        # Column j's distinct c and weights: zero_c/zero_w[zero_ptr[j]:zero_ptr[j + 1]].
        self.zero = ~np.any(S != 0, axis=0)
        distinct = [np.unique(self.c_t[j], return_counts=True) if z else (np.zeros(0), np.zeros(0, np.int64))
                    for j, z in enumerate(self.zero)]
        self.zero_ptr = np.concatenate([[0], np.cumsum([c.size for c, _ in distinct])]).astype(np.int64)
        self.zero_c = np.concatenate([c for c, _ in distinct]) if distinct else np.zeros(0)
        self.zero_w = np.concatenate([w for _, w in distinct]) if distinct else np.zeros(0, np.int64)

    def pvalue(self, t: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Two-sided sign-flip p of the shift t[i] for column cols[i]."""
        t, cols = np.asarray(t, dtype=np.float64), np.asarray(cols)
        return self.p_of(self._hits(t, self.threshold(t, cols), cols))

    def threshold(self, t: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """observed - tol: a pattern is a hit where |a - t c| is at least this."""
        observed = np.abs(self.total_s[cols] - t * self.total_n[cols])
        spread = np.abs(self.S[:, cols] - t * self.N[:, cols]).sum(axis=0)
        tol = REL_TOL * spread + 1e-300
        return observed - tol

    def p_of(self, hits: np.ndarray) -> np.ndarray:
        """The p of these hit counts."""
        if self.exact:
            return hits / self.patterns
        return (hits + 1.0) / (self.patterns + 1.0)

    def _hits(self, t: np.ndarray, threshold: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Per column, the patterns with |a - t c| >= threshold, a block of columns at a
        time."""
        hits = np.zeros(cols.size, dtype=np.int64)
        zero = self.zero[cols]
        if zero.any():
            hits[zero] = self._zero_hits(t[zero], threshold[zero], cols[zero])
            if zero.all():
                return hits
            rest = np.flatnonzero(~zero)
            hits[rest] = self._hits(t[rest], threshold[rest], cols[rest])
            return hits
        for start in range(0, cols.size, BLOCK_COLUMNS):
            stop = min(start + BLOCK_COLUMNS, cols.size)
            idx = cols[start:stop]
            if idx[-1] - idx[0] == stop - start - 1 and np.all(np.diff(idx) == 1):
                a, c = self.a_t[idx[0]:idx[-1] + 1], self.c_t[idx[0]:idx[-1] + 1]
            else:
                a, c = self.a_t[idx], self.c_t[idx]
            x = np.multiply(t[start:stop, None], c, dtype=np.float64)
            np.subtract(a, x, out=x)
            np.abs(x, out=x)
            hits[start:stop] = np.count_nonzero(x >= threshold[start:stop, None], axis=1)
        return hits

    def _zero_hits(self, t: np.ndarray, threshold: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """_hits of columns where no question differs, from their distinct c (a = 0, so
        |a - t c| is |t c|); an entry per (t, column), a column may stand more than once."""
        lo, size = self.zero_ptr[cols], np.diff(self.zero_ptr)[cols]
        k = np.repeat(np.arange(cols.size), size)  # the entry each distinct c belongs to
        idx = np.arange(k.size) - np.repeat(np.cumsum(size) - size, size) + lo[k]
        hit = np.abs(t[k] * self.zero_c[idx]) >= threshold[k]
        counts = np.bincount(k[hit], weights=self.zero_w[idx][hit], minlength=cols.size)
        return counts.round().astype(np.int64)


def _endpoint(pat: SignPatterns, cols: np.ndarray, inner: np.ndarray, outer: np.ndarray,
              level: np.ndarray, plain: bool = False) -> np.ndarray:
    """Bisection between inner (kept) and outer (rejected) shifts: the last kept shift.
    Counted on the patterns the bracket leaves undecided (inversion_prune: the same
    decisions, so the same endpoints), or on every pattern at every step when `plain`."""
    if not plain:
        return pruned_endpoint(pat, cols, inner, outer, level, BISECT_STEPS)
    inner, outer = inner.copy(), outer.copy()
    for _ in range(BISECT_STEPS):
        mid = 0.5 * (inner + outer)
        keep = pat.pvalue(mid, cols) > level
        inner = np.where(keep, mid, inner)
        outer = np.where(keep, outer, mid)
    return inner


def inversion_interval(D: np.ndarray, M: np.ndarray, S: np.ndarray, N: np.ndarray,
                       level: np.ndarray, reject0: np.ndarray | None, *, resamples: int,
                       seed: int, plain: bool = False
                       ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(low, high, flag) per column of the interval at per-column test level `level`
    (module docstring). D, M: questions x columns (differences, used mask), only for the
    range of the differences; S, N: cluster sums and counts (ablate.components.stats.clusters);
    reject0: whether the column's test rejects theta = 0 at its level (None: this test's
    own p at 0 decides); plain: bisect counting every pattern at every step (the same
    endpoints, slower: for tests and benchmarks)."""
    ncol = D.shape[1]
    low, high = np.full(ncol, np.nan), np.full(ncol, np.nan)
    flags = [""] * ncol
    n = N.sum(axis=0)
    cols = np.flatnonzero((n > 0) & np.isfinite(level))
    if cols.size == 0:
        return low, high, flags
    pat = SignPatterns(S[:, cols], N[:, cols], resamples, seed)
    local = np.arange(cols.size)
    theta = S[:, cols].sum(axis=0) / n[cols]
    Dm = np.where(M[:, cols], D[:, cols], np.nan)
    span = np.nanmax(np.abs(Dm), axis=0) + np.abs(theta)
    margin = 1e-6 * span + 1e-12
    d_min = np.minimum(np.nanmin(Dm, axis=0), theta) - margin
    d_max = np.maximum(np.nanmax(Dm, axis=0), theta) + margin
    lev = level[cols]
    rej0 = pat.pvalue(np.zeros(cols.size), local) <= lev if reject0 is None else reject0[cols]
    rej = rej0 & (theta != 0)
    # lower end: between theta (or 0, when 0 must stay inside) and the far side
    lo_forced, hi_forced = rej & (theta > 0), rej & (theta < 0)  # 0 rejected: outside
    lo_in = np.where(~rej & (theta > 0), 0.0, theta)
    lo_out = np.where(lo_forced, 0.0, d_min)
    hi_in = np.where(~rej & (theta < 0), 0.0, theta)
    hi_out = np.where(hi_forced, 0.0, d_max)
    lo_bounded = lo_forced | (pat.pvalue(lo_out, local) <= lev)
    hi_bounded = hi_forced | (pat.pvalue(hi_out, local) <= lev)
    lo = _endpoint(pat, local, lo_in, lo_out, lev, plain)
    hi = _endpoint(pat, local, hi_in, hi_out, lev, plain)
    low[cols] = np.where(lo_bounded, lo, np.nan)
    high[cols] = np.where(hi_bounded, hi, np.nan)
    for i in np.flatnonzero(~(lo_bounded & hi_bounded)):
        flags[cols[i]] = FLAG_UNBOUNDED
    return low, high, flags
