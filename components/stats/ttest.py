"""Paired t-test, Wilcoxon signed-rank and per-comparison descriptives, vectorised.

Every function takes D (questions x comparisons, 0 where the question is not used) and
the boolean mask M of used questions, so all comparisons run in one pass.
"""

from __future__ import annotations

import warnings

import numpy as np


def paired_moments(D: np.ndarray, M: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n_used, mean difference, sample sd with ddof=1) per column."""
    n = M.sum(axis=0).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(M, D, 0.0).sum(axis=0) / n
        centred = np.where(M, D - mean, 0.0)
        sd = np.sqrt((centred**2).sum(axis=0) / (n - 1))
    sd[n < 2] = np.nan
    return n, mean, sd


def paired_ttest(D: np.ndarray, M: np.ndarray, alpha: float
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(t, two-sided p, CI low, CI high) of the mean difference, as scipy's ttest_rel.

    Zero variance: t = +-inf and p = 0 when the mean is non-zero, NaN when it is zero.
    """
    # Student's t from scipy.special, as scipy.stats.t computes it (sf(x) = stdtr(df, -x),
    # ppf(q) = stdtrit(df, q)), without importing scipy.stats
    from scipy.special import stdtr, stdtrit
    n, mean, sd = paired_moments(D, M)
    df = n - 1
    with np.errstate(invalid="ignore", divide="ignore"):
        se = sd / np.sqrt(n)
        t = mean / se
        p = 2.0 * stdtr(df, -np.abs(t))
        half = stdtrit(df, 1.0 - alpha / 2.0) * se
    bad = df < 1
    t[bad] = p[bad] = np.nan
    low, high = mean - half, mean + half
    low[bad] = high[bad] = np.nan
    return t, p, low, high


def wilcoxon_pvalues(D: np.ndarray, M: np.ndarray) -> np.ndarray:
    """Two-sided Wilcoxon signed-rank p per column (scipy defaults; NaN if all ties)."""
    from scipy import stats as sps
    out = np.full(D.shape[1], np.nan)
    for j in range(D.shape[1]):
        d = D[M[:, j], j]
        if d.size == 0 or not np.any(d != 0):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[j] = float(sps.wilcoxon(d).pvalue)
    return out


def win_tie_loss(D: np.ndarray, M: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts of used questions where the variant is better / equal / worse (ties = 0)."""
    wins = ((D > 0) & M).sum(axis=0)
    losses = ((D < 0) & M).sum(axis=0)
    ties = M.sum(axis=0) - wins - losses
    return wins, ties, losses


def effect_size_dz(mean: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """Cohen's d_z = mean difference / sd of the differences (paired design)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return mean / sd
