"""Paired bootstrap CI of the mean difference: percentile or BCa, plain or clustered.

Questions (or whole clusters of questions, e.g. many questions about one document) are
resampled with replacement; each comparison's statistic is the mean difference over the
resampled questions it uses. ONE resample matrix over all questions serves every
comparison (two matrix products for the whole table). A comparison that uses every
question gets the textbook paired bootstrap; one whose metric is undefined on some
questions gets the domain-mean (ratio) bootstrap, where the number of used questions
varies between resamples like it would between samples. A plain bootstrap is the
clustered one with one question per cluster (identical numbers).

BCa (default) falls back to percentile, with a flag, when it is undefined: fewer than 2
clusters, no spread among jackknife values, or every resample on one side of the
estimate.
"""

from __future__ import annotations

import numpy as np

BLOCK = 1024
FLAG_BCA_UNDEFINED = "bca_undefined_used_percentile"


def cluster_codes(labels: np.ndarray | None, n: int) -> np.ndarray:
    """Clusters 0..G-1 numbered in order of first appearance (so plain == clustered)."""
    if labels is None:
        return np.arange(n, dtype=np.int64)
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inverse.ravel()]


def bootstrap_means(D: np.ndarray, M: np.ndarray, codes: np.ndarray, resamples: int,
                    seed: int) -> np.ndarray:
    """Resampled mean differences (resamples x columns); NaN if a resample drew no
    used question of that column."""
    rng = np.random.default_rng([int(seed), 0xB007])
    g = int(codes.max()) + 1
    identity = codes.size == g and bool(np.all(codes == np.arange(g)))
    Mf = M.astype(np.float64)
    out = np.empty((resamples, D.shape[1]))
    done = 0
    while done < resamples:
        rows = min(BLOCK, resamples - done)
        idx = rng.integers(0, g, size=(rows, g))
        idx += (np.arange(rows) * g)[:, None]
        counts = np.bincount(idx.ravel(), minlength=rows * g).reshape(rows, g)
        w = (counts if identity else counts[:, codes]).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[done:done + rows] = (w @ D) / (w @ Mf)
        done += rows
    return out


def _quantiles(sorted_boot: np.ndarray, valid: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Linear-interpolated quantile per column (as np.quantile) over its valid rows
    (NaN rows sort last)."""
    h = np.clip(levels, 0.0, 1.0) * (valid - 1)
    lo = np.floor(h).astype(np.int64)
    hi = np.minimum(lo + 1, valid - 1)
    frac = h - lo
    cols = np.arange(sorted_boot.shape[1])
    return sorted_boot[lo, cols] + frac * (sorted_boot[hi, cols] - sorted_boot[lo, cols])


def _bca_levels(D: np.ndarray, M: np.ndarray, codes: np.ndarray, boot: np.ndarray,
                theta: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """BCa (lower, upper) percentile levels per column; NaN where BCa is undefined."""
    from scipy.special import ndtr, ndtri  # here: a run whose stages are all cached never
    # analyses, and scipy is ~0.5 s of its start (tests/flows/run/test_cached_run_imports.py)
    g = int(codes.max()) + 1
    sums = np.zeros((g, D.shape[1]))
    sizes = np.zeros((g, D.shape[1]))
    np.add.at(sums, codes, np.where(M, D, 0.0))
    np.add.at(sizes, codes, M.astype(np.float64))
    has = sizes > 0                                   # clusters this column uses
    n_clusters = has.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        jack = (sums.sum(axis=0) - sums) / (sizes.sum(axis=0) - sizes)
        jack_mean = np.where(has, jack, 0.0).sum(axis=0) / n_clusters
        u = np.where(has, jack_mean - jack, 0.0)
        accel = (u**3).sum(axis=0) / (6.0 * ((u**2).sum(axis=0)) ** 1.5)
        accel[n_clusters < 2] = np.nan
        tol = 1e-9 * np.abs(D).max(axis=0) + 1e-300
        below = (boot < theta - tol).sum(axis=0)
        equal = (np.abs(boot - theta) <= tol).sum(axis=0)
        z0 = ndtri((below + 0.5 * equal) / np.isfinite(boot).sum(axis=0))
        out = []
        for z_a in (ndtri(alpha / 2.0), ndtri(1.0 - alpha / 2.0)):
            level = ndtr(z0 + (z0 + z_a) / (1.0 - accel * (z0 + z_a)))
            out.append(np.where(np.isfinite(z0) & np.isfinite(accel), level, np.nan))
    return out[0], out[1]


def bootstrap_ci(D: np.ndarray, M: np.ndarray, *, clusters: np.ndarray | None = None,
                 alpha: float = 0.05, resamples: int = 10_000, seed: int = 0,
                 method: str = "bca") -> tuple[np.ndarray, np.ndarray, list[str], list[str]]:
    """(low, high, method used, flag) of the (1-alpha) CI of each column's mean difference.

    D: questions x comparisons (0 where unused); M: used mask; clusters: one label per
    question (row), or None for the plain bootstrap.
    """
    ncol = D.shape[1]
    low, high = np.full(ncol, np.nan), np.full(ncol, np.nan)
    used_method, flags = [method] * ncol, [""] * ncol
    cols = np.flatnonzero(M.any(axis=0))
    if cols.size == 0:
        return low, high, used_method, flags
    D, M = np.where(M, D, 0.0)[:, cols], M[:, cols]
    codes = cluster_codes(clusters, D.shape[0])
    boot = bootstrap_means(D, M, codes, resamples, seed)
    theta = D.sum(axis=0) / M.sum(axis=0)
    q_lo = np.full(cols.size, alpha / 2.0)
    q_hi = np.full(cols.size, 1.0 - alpha / 2.0)
    if method == "bca":
        b_lo, b_hi = _bca_levels(D, M, codes, boot, theta, alpha)
        ok = np.isfinite(b_lo) & np.isfinite(b_hi)
        q_lo, q_hi = np.where(ok, b_lo, q_lo), np.where(ok, b_hi, q_hi)
        for i in np.flatnonzero(~ok):
            used_method[cols[i]], flags[cols[i]] = "percentile", FLAG_BCA_UNDEFINED
    valid = np.isfinite(boot).sum(axis=0)
    boot.sort(axis=0)
    low[cols] = _quantiles(boot, valid, q_lo)
    high[cols] = _quantiles(boot, valid, q_hi)
    return low, high, used_method, flags
