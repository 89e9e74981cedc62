"""One inference routine for every table of paired differences (the comparisons with the
baseline, the factorial effects): the test, the correction, the interval and the MDE,
all on clusters (ablate.components.stats.clusters).

Given D (questions x columns of paired differences, 0 where unused or tied), the used
mask M, one cluster code per question and the family of each column:

1. per-cluster sums S and counts N;
2. the configured test's p on the cluster sums (TESTS), then the correction per family;
3. the interval. The default `inversion` inverts the test itself, as it declares
   (`inverts`, ablate.components.stats.abilities): the sign-flip test
   (ablate.components.stats.inversion) or the cluster-robust t interval (the t test's),
   at the level a_j = alpha * p_j / p_adjusted_j at which the raw test rejects exactly
   when the corrected p is at most alpha, so "significant" and "the interval excludes 0"
   agree by construction (`ci_level` records 1 - a_j). `bca` / `percentile` (the cluster
   bootstrap) and `t` (cluster-robust t) are options at 1 - alpha; a bootstrap interval
   of a column with fewer than MIN_UNTIED_FOR_BOOTSTRAP differing pairs is replaced by
   the inversion interval (a handful of distinct values makes the bootstrap distribution
   a few atoms, and BCa then excluded 0 beside p = 0.5);
4. the MDE at the corrected level: the planning alpha of the family (the smallest raw p
   the correction can call significant, e.g. alpha / m for holm) and the cluster-robust
   (CR2) standard error, with its Bell-McCaffrey degrees of freedom. None (NaN) where the
   test cannot reject at that level at all with G clusters (its declared `smallest_p`,
   2 / 2^G for the sign-flip test, is above it): there is no effect it could detect;
5. k, the clusters with any change (`n_changed_clusters`): below FEW_CHANGED the interval
   is flagged `few_changed_clusters` (on 0/1 metrics with most pairs tied its coverage
   is governed by k, not G; ablate.components.stats.clusters), and on a 0/1 metric
   (every difference -1, 0 or +1) it is widened to hold the two-sided cluster-aware
   Tango score interval at the same level, which accounts for changes not seen
   (ablate.components.stats.binary_bound.widen_few_changed; `ci_method` gains `+tango`);
   with too few documents for the cluster-robust bound, a side holds the Tango bound of
   independent questions instead (`ci_flag` few_documents_iid_tango).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ablate.components.stats.binary_bound import FLAG_FEW_DOCUMENTS, widen_few_changed
from ablate.components.stats.bootstrap import bootstrap_ci
from ablate.components.stats.clusters import (
    FEW_CHANGED,
    FLAG_FEW_CHANGED,
    changed_clusters,
    cluster_se,
    cluster_sums,
    cluster_ttest,
    n_clusters,
)
from ablate.components.stats.correction import adjust_pvalues, resamples_needed, smallest_threshold
from ablate.components.stats.inversion import inversion_interval
from ablate.components.stats.paired_tests import TESTS, abilities
from ablate.components.stats.power import mde_dz

MC_RESOLUTION = 10.0  # smallest Monte-Carlo p is at most 1/10 of the smallest threshold
MIN_UNTIED_FOR_BOOTSTRAP = 10  # fewer differing pairs: the inversion interval instead
FLAG_FEW_UNTIED = "few_untied_pairs_inversion"


@dataclass
class Inference:
    """Per column: counts, estimate, test, correction, interval, MDE."""

    n: np.ndarray
    n_clusters: np.ndarray
    mean: np.ndarray
    p_value: np.ndarray
    p_method: list[str]
    resamples_used: np.ndarray
    p_adjusted: np.ndarray
    significant: np.ndarray
    family_size: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    ci_method: list[str]
    ci_flag: list[str]
    ci_level: np.ndarray
    t_stat: np.ndarray
    p_t: np.ndarray
    t_low: np.ndarray
    t_high: np.ndarray
    mde: np.ndarray
    bootstrap_resamples: int
    # comparisons tested elsewhere that join the correction (`infer`'s extra_p): their
    # corrected p-values and family sizes, in the order given
    extra_p_adjusted: np.ndarray = field(default_factory=lambda: np.zeros(0))
    extra_family_size: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # k: per column, the clusters with any change (clusters.changed_clusters)
    n_changed_clusters: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def _corrected(p: np.ndarray, fam_key: np.ndarray, correction: str
               ) -> tuple[np.ndarray, np.ndarray]:
    p_adj = np.full(p.size, np.nan)
    size = np.zeros(p.size, dtype=np.int64)
    for k in sorted(set(fam_key.tolist())):
        idx = np.flatnonzero(fam_key == k)
        p_adj[idx] = adjust_pvalues(p[idx], correction)
        size[idx] = int(np.isfinite(p[idx]).sum())
    return p_adj, size


def test_level(p: np.ndarray, p_adj: np.ndarray, alpha: float) -> np.ndarray:
    """a_j = alpha * p_j / p_adjusted_j: the raw test at a_j rejects exactly when the
    corrected p is at most alpha (alpha where p is 0 or undefined)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        level = alpha * p / p_adj
    return np.where(np.isfinite(level) & (level > 0), np.minimum(level, alpha), alpha)


def planning_mde(S: np.ndarray, N: np.ndarray, alpha_star: np.ndarray,
                 power: float = 0.8) -> np.ndarray:
    """MDE in metric units: the d_z detected with `power` by a t test with G - 1 df at
    alpha_star, times sqrt(G) * the cluster-robust SE (with singleton clusters, the paired
    t test's MDE: mde_dz(n) * sd)."""
    _, se, df = cluster_se(S, N)
    g = df + 1.0
    out = np.full(S.shape[1], np.nan)
    for j in np.flatnonzero(np.isfinite(se) & (se > 0) & (g >= 2)):
        out[j] = mde_dz(int(g[j]), float(alpha_star[j]), power) * np.sqrt(g[j]) * se[j]
    return out


def infer(D: np.ndarray, M: np.ndarray, codes: np.ndarray, fam_key: np.ndarray, *,
          test: str, correction: str, alpha: float, resamples: int,
          bootstrap_resamples: int, ci_method: str, seed: int,
          clustered: bool, extra_p: np.ndarray | None = None,
          extra_fam: np.ndarray | None = None) -> Inference:
    """The module docstring's steps for every column of D; `clustered`: the codes come
    from a cluster column (else every question is its own cluster and codes are ignored).
    `extra_p` / `extra_fam`: p-values of comparisons tested elsewhere (the judge-corrected
    ones, ablate.components.stats.ppi_compare) and their family keys: they join the
    correction of their families, so a family holds every comparison it names."""
    extra_p = np.zeros(0) if extra_p is None else np.asarray(extra_p, dtype=float)
    extra_fam = (np.zeros(0, dtype=fam_key.dtype) if extra_fam is None
                 else np.asarray(extra_fam, dtype=fam_key.dtype))
    ncol = D.shape[1]
    codes = codes if clustered else np.arange(D.shape[0], dtype=np.int64)
    S, N = cluster_sums(D, M, codes)
    n = N.sum(axis=0).astype(np.int64)
    mean = np.full(ncol, np.nan)
    np.divide(S.sum(axis=0), n, out=mean, where=n > 0)
    defined = n >= 1
    m_max = max(int((defined & (fam_key == k)).sum()
                    + (np.isfinite(extra_p) & (extra_fam == k)).sum())
                for k in set(fam_key.tolist()) | set(extra_fam.tolist()))
    n_mc = max(resamples, resamples_needed(correction, max(m_max, 1), alpha, MC_RESOLUTION))
    p, p_method, used = TESTS.get(test)(S, N, resamples=n_mc, seed=seed, alpha=alpha)
    able = abilities(test)
    p[~defined] = np.nan
    p_method = [pm if ok else "none" for pm, ok in zip(p_method, defined)]
    p_adj, fam_size = _corrected(np.concatenate([p, extra_p]),
                                 np.concatenate([fam_key, extra_fam]), correction)
    p_adj, fam_size, extra_adj, extra_size = (p_adj[:ncol], fam_size[:ncol], p_adj[ncol:],
                                              fam_size[ncol:])
    significant = np.nan_to_num(p_adj, nan=np.inf) <= alpha
    level = test_level(p, p_adj, alpha)
    t_stat, p_t, t_lo, t_hi = cluster_ttest(S, N, alpha)

    ci_flag = [""] * ncol
    boot_b = 0
    if ci_method == "inversion" and able.inverts == "t":
        _, _, lo, hi = _t_at(S, N, level)
        ci_used = [able.inversion] * ncol
    elif ci_method == "inversion":  # this test's own decision at 0 when it is the sign-flip
        lo, hi, ci_flag = inversion_interval(D, M, S, N, level,
                                             significant if able.inverts == "signflip" else None,
                                             resamples=n_mc, seed=seed)
        ci_used = [able.inversion] * ncol
    elif ci_method == "t":
        lo, hi, ci_used, level = t_lo, t_hi, ["t"] * ncol, np.full(ncol, alpha)
    else:
        lo, hi, ci_used, ci_flag = bootstrap_ci(D, M, clusters=codes if clustered else None,
                                                alpha=alpha, resamples=bootstrap_resamples,
                                                seed=seed, method=ci_method)
        boot_b = bootstrap_resamples
        level = np.full(ncol, alpha)
        few = np.flatnonzero(((D != 0) & M).sum(axis=0) < MIN_UNTIED_FOR_BOOTSTRAP)
        if few.size:
            f_lo, f_hi, f_flag = inversion_interval(
                D[:, few], M[:, few], S[:, few], N[:, few], np.full(few.size, alpha),
                np.nan_to_num(p[few], nan=1.0) <= alpha, resamples=n_mc, seed=seed)
            for i, j in enumerate(few):
                lo[j], hi[j], ci_used[j] = f_lo[i], f_hi[i], "signflip-inversion"
                ci_flag[j] = "; ".join(x for x in (FLAG_FEW_UNTIED, f_flag[i]) if x)
    alpha_star = np.array([smallest_threshold(correction, max(int(s), 1), alpha)
                           for s in fam_size])
    k = changed_clusters(D, M, codes)
    for j in np.flatnonzero((k > 0) & (k < FEW_CHANGED)):
        ci_flag[j] = "; ".join(x for x in (ci_flag[j], FLAG_FEW_CHANGED) if x)
    lo, hi, widened, few_docs = widen_few_changed(lo, hi, D, M, S, N, level, k, FEW_CHANGED,
                                                  significant)
    ci_used = [f"{c}+tango" if w else c for c, w in zip(ci_used, widened)]
    for j in np.flatnonzero(few_docs):
        ci_flag[j] = "; ".join(x for x in (ci_flag[j], FLAG_FEW_DOCUMENTS) if x)
    mde = planning_mde(S, N, alpha_star)
    if able.smallest_p is not None:  # no MDE where the test cannot reject at all
        g = n_clusters(N).astype(np.float64)
        mde[able.smallest_p.of(g) > alpha_star] = np.nan
    return Inference(n, n_clusters(N), mean, p, p_method, used, p_adj, significant, fam_size,
                     lo, hi, ci_used, ci_flag, 1.0 - level, t_stat, p_t, t_lo, t_hi,
                     mde, boot_b, extra_adj, extra_size, k)


def _t_at(S: np.ndarray, N: np.ndarray, level: np.ndarray):
    """The cluster-robust t interval at a per-column level."""
    from scipy.special import stdtrit
    theta, se, df = cluster_se(S, N)
    with np.errstate(invalid="ignore"):
        half = stdtrit(df, 1.0 - level / 2.0) * se
    return theta, se, theta - half, theta + half
