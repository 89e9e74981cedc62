"""Two-sided paired sign-flip randomisation test of the mean difference.

Under H0 (variant and baseline exchangeable per question) each paired difference is
equally likely to carry either sign. The statistic is |sum(d)| (equivalent to the mean
for a fixed n). Three ways to get p, chosen per comparison:

- ``exact-grid``: differences on a rational grid (binary metrics, 0/0.5/1, reciprocal
  ranks ...) -> the null distribution of the integer sum is built exactly by
  convolution; comparisons are on integers, so ties are exact. On 0/1 data this is the
  exact McNemar (binomial) test.
- ``exact-enum``: few non-zero differences -> enumerate all 2^n sign patterns.
- ``monte-carlo``: B random sign patterns from ONE matrix shared by every comparison
  (columns of zeros for unused questions), p = (c+1)/(B+1), so p is never 0.

Zero differences are dropped (their sign does not matter). Resampled statistics equal
to the observed one count as "at least as extreme", with a relative tolerance, since
IR metrics tie often and float sums are not exact.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

EXACT_MAX_PATTERNS = 2**16      # enumerate when 2^n_nonzero is at most this (or B)
GRID_MAX_DENOMINATOR = 10_000   # largest grid denominator tried (lcm of all of them)
GRID_WORK_BUDGET = 5 * 10**7    # max cells touched by the exact grid convolution
REL_TOL = 1e-9                  # tie tolerance, relative to sum(|d|)
MC_CHUNK = 2048                 # sign-matrix rows generated per block
ENUM_HARD_LIMIT = 2**20         # never enumerate more patterns than this
ENUM_KEEP_CELLS = 2**20         # sign matrices kept between columns up to this size


def _tol(d: np.ndarray) -> float:
    return REL_TOL * float(np.abs(d).sum()) + 1e-300


def grid_steps(d: np.ndarray) -> np.ndarray | None:
    """Integers k with d = k / L for one common L, or None when d is not on a grid."""
    uniq = np.unique(np.abs(d[d != 0]))
    if uniq.size == 0:
        return np.zeros(d.shape, dtype=np.int64)
    lcm = 1
    for x in uniq:
        fx = float(x)
        fr = Fraction(fx).limit_denominator(GRID_MAX_DENOMINATOR)
        if abs(fx - fr.numerator / fr.denominator) > 1e-11 * max(1.0, fx):
            return None
        lcm = lcm * fr.denominator // math.gcd(lcm, fr.denominator)
        if lcm > GRID_MAX_DENOMINATOR:
            return None
    scaled = d * lcm
    k = np.rint(scaled)
    if np.any(np.abs(scaled - k) > 1e-8 * np.maximum(1.0, np.abs(scaled))):
        return None
    return k.astype(np.int64)


def _half_binomial(m: int) -> np.ndarray:
    """P(X = j), j = 0..m, X ~ Binomial(m, 1/2): comb(m, j) / 2**m in exact integers,
    correctly rounded (Python's int / int)."""
    whole = 2 ** m
    return np.array([math.comb(m, j) / whole for j in range(m + 1)])


def grid_pvalue(k_signed: np.ndarray) -> float | None:
    """Exact p = P(|sum s_i k_i| >= |sum k_i|) for integer k, s_i = +-1 with prob 1/2.

    The sum of m copies of +-k is k*(2X - m), X ~ Binomial(m, 1/2); groups of equal |k|
    are convolved by shifted adds. Returns None when the work exceeds GRID_WORK_BUDGET.
    """
    nz = k_signed[k_signed != 0]
    if nz.size == 0:
        return 1.0
    observed = abs(int(nz.sum()))
    values, counts = np.unique(np.abs(nz), return_counts=True)
    total = int(np.abs(nz).sum())
    work = sum((int(c) + 1) for c in counts[1:]) * (2 * total + 1)
    if work > GRID_WORK_BUDGET:
        return None
    # pmf over sums -total..total, index = s + total
    pmf = np.zeros(2 * total + 1)
    k0, m0 = int(values[0]), int(counts[0])
    pos = k0 * (2 * np.arange(m0 + 1) - m0) + total
    pmf[pos] = _half_binomial(m0)
    span = k0 * m0
    for kv, mv in zip(values[1:], counts[1:]):
        kv, mv = int(kv), int(mv)
        weights = _half_binomial(mv)
        new = np.zeros_like(pmf)
        lo, hi = total - span, total + span + 1
        for j, w in enumerate(weights):
            shift = kv * (2 * j - mv)
            new[lo + shift:hi + shift] += w * pmf[lo:hi]
        pmf = new
        span += kv * mv
    sums = np.arange(-total, total + 1)
    return float(min(1.0, pmf[np.abs(sums) >= observed].sum()))


def enum_pvalue(d: np.ndarray, patterns: dict | None = None) -> float:
    """Exact p by enumerating every sign pattern of the non-zero differences. `patterns`:
    a dict in which the sign matrices are kept (by size) for the next call; the ones of
    at most ENUM_KEEP_CELLS cells are kept."""
    nz = d[d != 0]
    n = nz.size
    if n == 0:
        return 1.0
    observed = abs(float(nz.sum())) - _tol(nz)
    # Fix the first sign (+): |S| is symmetric under a global flip, so half suffices.
    rest = nz[1:]
    total = 2 ** (n - 1)
    hits = 0
    for start in range(0, total, MC_CHUNK * 32):
        stop = min(total, start + MC_CHUNK * 32)
        signs = None if patterns is None else patterns.get((n, start))
        if signs is None:
            codes = np.arange(start, stop, dtype=np.int64)[:, None]
            signs = ((codes >> np.arange(n - 1)) & 1) * 2.0 - 1.0
            if patterns is not None and signs.size <= ENUM_KEEP_CELLS:
                patterns[(n, start)] = signs
        sums = nz[0] + signs @ rest
        hits += int((np.abs(sums) >= observed).sum())
    return hits / total


def sign_matrix_blocks(n: int, resamples: int, seed: int):
    """Yield blocks of the shared +-1 sign matrix (rows = resamples, cols = questions).

    Blocks have a fixed size, so the first B rows are the same for any larger B.
    """
    rng = np.random.default_rng([seed, 0x5151])
    done = 0
    while done < resamples:
        rows = min(MC_CHUNK, resamples - done)
        raw = rng.integers(0, 256, size=(rows, (n + 7) // 8), dtype=np.uint8)
        bits = np.unpackbits(raw, axis=1, count=n)
        yield bits.astype(np.float64) * 2.0 - 1.0
        done += rows


def montecarlo_pvalues(D: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Monte-Carlo p for every column of D (questions x comparisons), one sign matrix."""
    n, c = D.shape
    if c == 0:
        return np.zeros(0)
    observed = np.abs(D.sum(axis=0)) - np.array([_tol(D[:, j]) for j in range(c)])
    count = np.zeros(c, dtype=np.int64)
    for signs in sign_matrix_blocks(n, resamples, seed):
        count += (np.abs(signs @ D) >= observed).sum(axis=0)
    return (count + 1.0) / (resamples + 1.0)


def signflip_pvalues(D: np.ndarray, *, resamples: int = 10_000, seed: int = 0,
                     exact_max_patterns: int = EXACT_MAX_PATTERNS
                     ) -> tuple[np.ndarray, list[str]]:
    """p-values and the method used ("exact-grid" | "exact-enum" | "monte-carlo"|"none")
    for each column of D (questions x comparisons; 0 = tie or question not used)."""
    _, c = D.shape
    p = np.full(c, np.nan)
    method = ["none"] * c
    mc_cols: list[int] = []
    patterns: dict = {}  # enumerations' sign matrices, shared by the columns of one size
    limit = min(max(exact_max_patterns, resamples), ENUM_HARD_LIMIT)
    for j in range(c):
        d = D[:, j]
        nz = d[d != 0]
        k = grid_steps(nz)
        if k is not None:
            pj = grid_pvalue(k)
            if pj is not None:
                p[j], method[j] = pj, "exact-grid"
                continue
        if nz.size <= 62 and 2 ** nz.size <= limit:
            p[j], method[j] = enum_pvalue(nz, patterns), "exact-enum"
            continue
        mc_cols.append(j)
    if mc_cols:
        p[mc_cols] = montecarlo_pvalues(D[:, mc_cols], resamples, seed)
        for j in mc_cols:
            method[j] = "monte-carlo"
    return p, method
