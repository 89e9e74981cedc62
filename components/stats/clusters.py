"""The unit of analysis: clusters of questions (questions that share a document).

Questions about one document are not independent, so every test and interval works on
per-cluster sums of the paired differences: S_g (the sum of d over cluster g's used
questions) and N_g (how many it used). Each question its own cluster gives the classical
question-level statistics exactly (S = D, N = M).

The estimate is the mean over questions, theta = sum S_g / sum N_g. Its cluster-robust
standard error (Liang & Zeger 1986; for evals: Miller 2024, "Adding error bars to evals")
is the CR2 ("bias-reduced linearization") variance of Bell & McCaffrey 2002, which
for a mean scales each cluster's squared residual sum by the inverse of 1 minus its
leverage h_g = N_g / n (the adjustment matrix (I - H_gg)^(-1/2) applied to a constant
column is the factor (1 - h_g)^(-1/2)):

    SE^2 = sum_g (S_g - theta N_g)^2 / (1 - N_g / n) / n^2,

and theta / SE is referred to Student's t with the Bell-McCaffrey (Satterthwaite)
degrees of freedom under working independence (Imbens & Kolesar 2016, "Robust standard
errors in small samples"; Pustejovsky & Tipton 2018), which for a mean reduce to

    df = n^2 / (sum_g N_g^2 + ((sum_g w_g N_g^2)^2 - sum_g w_g^2 N_g^4) / n^2),
    w_g = 1 / (1 - N_g / n).

With equal sizes w_g = G / (G - 1) and df = G - 1: the CR1 + t(G-1) rule of Cameron &
Miller 2015 exactly; with singleton clusters the paired t test (SE^2 = s^2 / n, n - 1
df). When one document dominates, CR1 with G - 1 df is liberal (one document with 40 %
of the questions: type-I 0.10-0.16 at G 10-40); CR2 with these df holds the level
(benchmarks/stat_validity.py, "dominant" rows).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

FEW_CLUSTERS = 10  # fewer clusters than this: the report says so (a finding, not a pass)
# fewer clusters with any change (k) than this: the interval is flagged (FLAG_FEW_CHANGED)
# and, on a 0/1 metric, widened to the cluster-aware Tango score interval
# (binary_bound.widen_few_changed). benchmarks/few_changes.py (50 documents x 20 questions,
# changes concentrated in a few documents, a true drop; 2000 studies per cell, 2026-12-04):
# the inversion interval alone covers the true difference 0.67 at k = 1, 0.80 at k = 2,
# 0.90 at k 3-4, 0.93-0.94 at k 5-9 and 0.92-0.96 from k = 10 on, as at large k; widened,
# 0.93-0.96 at k 1-9. So 10 is where re-signing the changes seen stops losing coverage.
FEW_CHANGED = 10
FLAG_FEW_CHANGED = "few_changed_clusters"


def cluster_column(choice: str | None, columns: Sequence[str] | None = None) -> str | None:
    """The per-question column a `stats.cluster` / `--cluster-column` setting names: `auto`
    (or unset) is the `cluster` column (each question's native cluster, else its gold
    document, else itself: ablate.components.data.clusters), or None when `columns` are
    given without one (a table written before clusters were recorded); `none` is None
    (independent questions); another value names a column."""
    if choice == "none":
        return None
    if choice in (None, "auto"):
        return "cluster" if columns is None or "cluster" in columns else None
    return choice


def cluster_sums(D: np.ndarray, M: np.ndarray, codes: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(S, N): per cluster (rows, codes 0..G-1) and column, the sum of the used
    differences and the number of used questions. D: questions x columns (0 where
    unused), M: used mask, codes: one cluster code per question."""
    g = int(codes.max()) + 1 if codes.size else 0
    if codes.size == g and bool(np.all(codes == np.arange(g))):
        return np.where(M, D, 0.0).astype(np.float64), M.astype(np.float64)
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    S = np.zeros((g, D.shape[1]))
    N = np.zeros((g, D.shape[1]))
    S[sorted_codes[starts]] = np.add.reduceat(np.where(M, D, 0.0)[order], starts, axis=0)
    N[sorted_codes[starts]] = np.add.reduceat(M[order].astype(np.float64), starts, axis=0)
    return S, N


def changed_clusters(D: np.ndarray, M: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Per column, k: the clusters with at least one used question whose difference is not
    0 (the clusters that carry any information on a shift; with ties, fewer than G)."""
    _, N = cluster_sums(np.zeros_like(D, dtype=np.float64), M & (D != 0), codes)
    return n_clusters(N)


def n_clusters(N: np.ndarray) -> np.ndarray:
    """Clusters each column uses (at least one used question)."""
    return (N > 0).sum(axis=0).astype(np.int64)


def cr2_weights(N: np.ndarray) -> np.ndarray:
    """Per cluster and column, the CR2 (Bell-McCaffrey) weight of a mean's squared residual
    sum: 1 / (1 - N_g / n), the inverse of 1 minus the cluster's leverage (module
    docstring). NaN where one cluster holds every used question."""
    n = N.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        lev = N / n
        return np.where(lev < 1.0, 1.0 / (1.0 - lev), np.nan)


def bm_df(N: np.ndarray) -> np.ndarray:
    """Per column, the Bell-McCaffrey (Satterthwaite) degrees of freedom of the CR2 variance
    of a mean with cluster sizes N (module docstring): G - 1 for equal sizes, fewer when
    one cluster dominates; NaN below 2 used clusters."""
    n = N.sum(axis=0)
    g = n_clusters(N)
    w = np.nan_to_num(cr2_weights(N), nan=0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        off = ((w * N**2).sum(axis=0) ** 2 - (w**2 * N**4).sum(axis=0)) / n**2
        df = n**2 / ((N**2).sum(axis=0) + off)
    return np.where(g >= 2, np.minimum(df, g - 1.0), np.nan)  # at most G - 1 (its rank)


def cluster_se(S: np.ndarray, N: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(theta, CR2 cluster-robust SE, Bell-McCaffrey df) per column (module docstring):
    for equal cluster sizes the CR1 SE with the G/(G-1) factor and G - 1 df exactly; SE
    is NaN below 2 used clusters."""
    n = N.sum(axis=0)
    g = n_clusters(N).astype(np.float64)
    w = np.nan_to_num(cr2_weights(N), nan=0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        theta = S.sum(axis=0) / n
        resid = S - theta * N
        se = np.sqrt((w * resid**2).sum(axis=0)) / n
    se[g < 2] = np.nan
    return theta, se, bm_df(N)


def cluster_ttest(S: np.ndarray, N: np.ndarray, alpha: float
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(t, two-sided p, CI low, CI high) of the mean difference, cluster-robust (module
    docstring). Zero SE: t = +-inf and p = 0 when the mean is non-zero, NaN when it is 0."""
    from scipy.special import stdtr, stdtrit
    theta, se, df = cluster_se(S, N)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = theta / se
        p = 2.0 * stdtr(df, -np.abs(t))
        half = stdtrit(df, 1.0 - alpha / 2.0) * se
    bad = ~(df >= 1)
    t[bad] = p[bad] = np.nan
    low, high = theta - half, theta + half
    low[bad] = high[bad] = np.nan
    return t, p, low, high

