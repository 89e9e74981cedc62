"""The inversion interval's bisection (ablate.components.stats.inversion), with the same
p at every step and a fraction of the work.

Each step of the bisection counts, per column, the sign patterns with
|a - t c| >= observed(t) - tol(t) at the bracket's midpoint t. Over a bracket [L, U] a
pattern's |a - t c| lies between its values at the ends (or reaches 0 where a - t c
changes sign) and the threshold between bounds taken from the ends as well, so once the
bracket is narrow most patterns are a hit, or a miss, for every t in it: they are counted
once and dropped, and each step evaluates only the undecided ones, with the very
expression SignPatterns.pvalue uses (elementwise IEEE operations give the same bits on a
subset), so the counts, the decisions and the endpoints are identical to the full count
(tests/components/stats/test_inversion_narrow.py). A pattern is only decided with a
margin of NARROW_MARGIN relative to the scale of the numbers, far above rounding.
"""

from __future__ import annotations

import numpy as np

from ablate.components.stats.signflip import REL_TOL

NARROW_MARGIN = 1e-7   # relative slack before a pattern counts as decided on a bracket
FIRST_NARROW = 5       # the first narrowing, at 1/32 of the bracket (wider decides few)
NARROW_EVERY = 2       # steps between narrowings while they drop patterns


def _threshold(pat, t: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """observed(t) - tol(t), exactly as SignPatterns.pvalue computes it."""
    observed = np.abs(pat.total_s[cols] - t * pat.total_n[cols])
    spread = np.abs(pat.S[:, cols] - t * pat.N[:, cols]).sum(axis=0)
    tol = REL_TOL * spread + 1e-300
    return observed - tol


def _spread(pat, t: np.ndarray, cols: np.ndarray) -> np.ndarray:
    return np.abs(pat.S[:, cols] - t * pat.N[:, cols]).sum(axis=0)


class Undecided:
    """Per column, the patterns not yet decided on the bracket (flattened: `col` the
    local column of each kept pattern, `a`, `c` its sums) and the hits decided so far."""

    def __init__(self, pat, cols: np.ndarray):
        ncol = cols.size
        a_t, c_t = pat.a_t[cols], pat.c_t[cols]
        # a column whose every cluster sum is 0 (no question differs) has a = 0 for every
        # pattern and ties at any shift near 0, where no bracket decides it: its patterns
        # are kept once per distinct c, weighted by how many share it (same (a, c), same
        # outcome at every shift)
        zero = ~np.any(pat.S[:, cols] != 0, axis=0)
        parts_col, parts_a, parts_c, parts_w = [], [], [], []
        for j in range(ncol):
            if zero[j]:
                c, w = np.unique(c_t[j], return_counts=True)
                parts_a.append(np.zeros(c.size))
            else:
                c, w = c_t[j], np.ones(c_t.shape[1], dtype=np.int64)
                parts_a.append(a_t[j])
            parts_c.append(c)
            parts_w.append(w)
            parts_col.append(np.full(c.size, j))
        self.col = np.concatenate(parts_col)
        self.a = np.concatenate(parts_a)
        self.c = np.concatenate(parts_c)
        self.w = np.concatenate(parts_w).astype(np.float64)
        self.base = np.zeros(ncol, dtype=np.int64)
        self.ncol = ncol

    def narrow(self, pat, cols: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        """Count and drop the patterns that are a hit, or a miss, for every t in
        [lo, hi] (per column, lo <= hi)."""
        obs_lo = np.abs(pat.total_s[cols] - lo * pat.total_n[cols])
        obs_hi = np.abs(pat.total_s[cols] - hi * pat.total_n[cols])
        crosses = np.sign(pat.total_s[cols] - lo * pat.total_n[cols]) != np.sign(
            pat.total_s[cols] - hi * pat.total_n[cols])
        tol_max = REL_TOL * np.maximum(_spread(pat, lo, cols), _spread(pat, hi, cols)) + 1e-300
        thr_max = np.maximum(obs_lo, obs_hi)
        thr_min = np.where(crosses, 0.0, np.minimum(obs_lo, obs_hi)) - tol_max
        tmax = np.maximum(np.abs(lo), np.abs(hi))
        scale = (np.abs(pat.total_s[cols]) + tmax * np.abs(pat.total_n[cols])
                 + np.abs(pat.a_t[cols]).max(axis=1) + tmax * np.abs(pat.c_t[cols]).max(axis=1))
        margin = NARROW_MARGIN * scale + 1e-300
        k = self.col
        above = (thr_max + margin)[k]
        below = (thr_min - margin)[k]
        e_lo = self.a - lo[k] * self.c
        e_hi = self.a - hi[k] * self.c
        crossing = (e_lo * e_hi) <= 0
        np.abs(e_lo, out=e_lo)
        np.abs(e_hi, out=e_hi)
        hit = np.minimum(e_lo, e_hi) > above
        hit &= ~crossing
        miss = np.maximum(e_lo, e_hi) < below
        self.base += np.rint(np.bincount(k[hit], weights=self.w[hit],
                                         minlength=self.ncol)).astype(np.int64)
        keep = ~(hit | miss)
        self.col, self.a, self.c, self.w = k[keep], self.a[keep], self.c[keep], self.w[keep]

    def hits(self, t: np.ndarray, threshold: np.ndarray) -> np.ndarray:
        """Per column, the patterns with |a - t c| >= threshold (decided ones included)."""
        x = t[self.col] * self.c
        np.subtract(self.a, x, out=x)
        np.abs(x, out=x)
        hit = x >= threshold[self.col]
        counted = np.bincount(self.col[hit], weights=self.w[hit], minlength=self.ncol)
        return self.base + np.rint(counted).astype(np.int64)


def narrowed_endpoint(pat, cols: np.ndarray, inner: np.ndarray, outer: np.ndarray,
                      level: np.ndarray, steps: int) -> np.ndarray:
    """inversion._endpoint's bisection (the last kept shift between inner and outer),
    counting only the undecided patterns at each step."""
    inner, outer = inner.copy(), outer.copy()
    left = Undecided(pat, cols)
    due = FIRST_NARROW
    for step in range(steps):
        if step == due:
            before = left.col.size
            left.narrow(pat, cols, np.minimum(inner, outer), np.maximum(inner, outer))
            # narrow often while it drops patterns, rarely once what is left are ties
            due += NARROW_EVERY if left.col.size < 0.8 * before else 4 * NARROW_EVERY
        mid = 0.5 * (inner + outer)
        hits = left.hits(mid, _threshold(pat, mid, cols))
        p = hits / pat.patterns if pat.exact else (hits + 1.0) / (pat.patterns + 1.0)
        keep = p > level
        inner = np.where(keep, mid, inner)
        outer = np.where(keep, outer, mid)
    return inner
