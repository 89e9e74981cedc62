"""The gate's lower bound on 0/1 metrics: a cluster-aware Tango score bound.

On a 0/1 metric the paired difference of a question is -1, 0 or +1 and most pairs tie.
A bound that only re-signs the observed differences (the sign-flip inversion) cannot
see changes that have not happened yet: 24 tied questions give a bound of exactly 0,
although a true drop of 0.02 would most likely show no change in 24 questions either.
What the data can rule out depends on how many changes a drop would need, not only on
the spread of the changes seen.

Tango's score test for the difference of paired proportions (Tango 1998, "Equivalence
test and confidence interval for the difference in proportions for the paired-sample
design", Statistics in Medicine 17) tests Delta = Delta0 with the variance the
multinomial (wins, ties, losses) would have if Delta0 were true, at the constrained
maximum-likelihood loss rate q (p_win = q + Delta0, p_loss = q):

    q = (-B + sqrt(B^2 - 4 A C)) / (2 A),  A = 2n,  B = -b - c + (2n - b + c) Delta0,
    C = -c Delta0 (1 - Delta0);           V_iid(Delta0) = n (2 q + Delta0 (1 - Delta0)),

b wins and c losses among n used pairs. Made cluster-aware here: the variance of the
total is the larger of V_iid (what independent questions would give; positively
correlated questions in a document only add to it) and the cluster-robust variance
around the null, sum_g w_g (S_g - Delta0 N_g)^2 with the CR2 weights w_g = 1 / (1 - N_g / n)
(ablate.components.stats.clusters), and Z(Delta0) = (b - c - n Delta0) / sqrt(V) is
referred to the normal where V_iid is the larger (a model variance, nothing estimated
from the clusters) and to Student's t with the Bell-McCaffrey degrees of freedom of the
cluster sizes where the cluster-robust variance is (estimated from G clusters).
The one-sided (1 - a) lower bound is the smallest Delta0 in [-1, theta] that Z does not
reject, found by bisection. With no change seen (b = c = 0) it is -z^2 / (n + z^2):
24 tied questions rule out no drop smaller than about 0.16 at 1 - 0.05/3, which is the
honest answer.

`floor` is that no-change bound, z^2 / (n + z^2): no 0/1 sample of n questions can show
a smaller drop, however many of them tie (239 tied questions rule out 0.0186 at
1 - 0.05/3; 24 rule out 0.159).
benchmarks/gate_validity.py measures the pass rate at a true drop equal to the margin.
"""

from __future__ import annotations

import numpy as np

from ablate.components.stats.clusters import bm_df, cr2_weights

BISECT_STEPS = 60
FLAG_FEW_DOCUMENTS = "few_documents_iid_tango"  # a side bounded as if questions were independent


def binary_columns(D: np.ndarray, M: np.ndarray) -> np.ndarray:
    """Per column: every used difference is -1, 0 or +1 (the differences of a 0/1 metric;
    a column of ties only counts: nothing shows it is not one)."""
    used = np.where(M, D, 0.0)
    return np.all((used == 0.0) | (used == 1.0) | (used == -1.0), axis=0) & (M.sum(axis=0) > 0)


def _tango_var(b: np.ndarray, c: np.ndarray, n: np.ndarray, delta0: np.ndarray) -> np.ndarray:
    """V_iid(Delta0) of the module docstring (the constrained multinomial variance of b - c)."""
    a = 2.0 * n
    bb = -b - c + (2.0 * n - b + c) * delta0
    cc = -c * delta0 * (1.0 - delta0)
    q = (-bb + np.sqrt(np.maximum(bb * bb - 4.0 * a * cc, 0.0))) / (2.0 * a)
    q = np.clip(q, np.maximum(0.0, -delta0), None)
    return n * np.maximum(2.0 * q + delta0 * (1.0 - delta0), 0.0)


def _z(delta0: np.ndarray, b: np.ndarray, c: np.ndarray, n: np.ndarray, S: np.ndarray,
       N: np.ndarray, w: np.ndarray, crit_z: np.ndarray, crit_t: np.ndarray) -> np.ndarray:
    """Z(Delta0) scaled so that it rejects where it exceeds 1: divided by the normal
    quantile where V_iid (a model variance) is the larger, by the t quantile where the
    cluster-robust variance (estimated from G clusters) is."""
    v_iid = _tango_var(b, c, n, delta0)
    v_cr = (w * (S - delta0 * N) ** 2).sum(axis=0)
    v = np.maximum(v_iid, v_cr)
    crit = np.where(v_cr > v_iid, crit_t, crit_z)
    num = b - c - n * delta0
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(v > 0, num / np.sqrt(v), np.where(num > 0, np.inf, 0.0)) / crit


def tango_lower(D: np.ndarray, M: np.ndarray, S: np.ndarray, N: np.ndarray,
                one_sided: float | np.ndarray, *, clustered: bool = True
                ) -> tuple[np.ndarray, np.ndarray]:
    """(lower, floor) per column: the one-sided (1 - one_sided) cluster-aware Tango lower
    bound of the mean difference (module docstring; D in {-1, 0, 1}, M the used mask, S
    and N the cluster sums and counts), and the no-change floor z^2 / (n + z^2): the
    bound with every pair tied, the smallest drop a 0/1 sample of n questions can rule
    out. NaN where nothing is used. Differences in [-1, 1] that are not all -1, 0 or +1
    (a worth contrast scaled to [-1, 1]) count their positive and negative parts as b and
    c: a variable in [-1, 1] has at most the variance of the 0/1 difference with the same
    positive and negative means, so the bound stays conservative. `clustered` False: the
    variance of independent questions only (V_iid, the normal quantile)."""
    from scipy.special import ndtri, stdtrit
    n = N.sum(axis=0)
    used = np.where(M, D, 0.0)
    b = np.maximum(used, 0.0).sum(axis=0)
    c = np.maximum(-used, 0.0).sum(axis=0)
    w = np.nan_to_num(cr2_weights(N), nan=0.0) if clustered else np.zeros_like(N)
    df = bm_df(N)
    crit_z = np.full(n.shape, ndtri(1.0 - one_sided))
    with np.errstate(invalid="ignore"):
        crit_t = np.where(df >= 1, stdtrit(np.maximum(df, 1.0), 1.0 - one_sided), np.inf)
        theta = (b - c) / n
    args = (b, c, n, S, N, w, crit_z, crit_t)
    inner, outer = theta.copy(), np.full_like(theta, -1.0)
    for _ in range(BISECT_STEPS):
        mid = 0.5 * (inner + outer)
        keep = _z(mid, *args) <= 1.0
        inner = np.where(keep, mid, inner)
        outer = np.where(keep, outer, mid)
    lower = np.where(_z(np.full_like(theta, -1.0), *args) <= 1.0, -1.0, inner)
    floor = crit_z**2 / (n + crit_z**2)
    bad = n <= 0
    lower[bad] = floor[bad] = np.nan
    return lower, floor


def tango_interval(D: np.ndarray, M: np.ndarray, S: np.ndarray, N: np.ndarray,
                   level: np.ndarray, *, clustered: bool = True
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The two-sided (1 - level) cluster-aware Tango score interval per column: the
    one-sided bound at level / 2 on each side (the upper one is minus the lower bound
    of the negated differences)."""
    half = np.asarray(level, dtype=np.float64) / 2.0
    lower, _ = tango_lower(D, M, S, N, half, clustered=clustered)
    upper, _ = tango_lower(-D, M, -S, N, half, clustered=clustered)
    return lower, -upper


def tango_few_documents(D: np.ndarray, M: np.ndarray, S: np.ndarray, N: np.ndarray,
                        level: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, few_documents) per column: the two-sided Tango interval, and where a
    side of it reaches -1 or +1 only because the cluster-robust variance is referred to
    Student's t with the few degrees of freedom of a few documents (its t statistic can
    never exceed about sqrt(G - 1), so with 6 documents it rejects no difference at all),
    that side from the variance of independent questions instead (`few_documents`): it
    still accounts for changes not seen, and the caller keeps the wider of it and the
    re-signing interval, which bounds the spread between the documents seen. A side
    that even this cannot bound stays at -1 or +1 (too few questions)."""
    lo, hi = tango_interval(D, M, S, N, level)
    few = (lo <= -1.0) | (hi >= 1.0)
    if few.any():
        i_lo, i_hi = tango_interval(D[:, few], M[:, few], S[:, few], N[:, few], level[few],
                                    clustered=False)
        lo[few] = np.where(lo[few] <= -1.0, i_lo, lo[few])
        hi[few] = np.where(hi[few] >= 1.0, i_hi, hi[few])
    return lo, hi, few


def widen_few_changed(lo: np.ndarray, hi: np.ndarray, D: np.ndarray, M: np.ndarray,
                      S: np.ndarray, N: np.ndarray, level: np.ndarray, k: np.ndarray,
                      few: int, significant: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, widened, few_documents): on 0/1 columns whose changes sit in fewer than `few`
    clusters (0 < k < few; with no change at all the interval stays [0, 0], which the
    report labels 'no question differs', not a precise 0), the interval widened to hold the two-sided
    Tango interval at the same level: re-signing the few changes seen cannot bound the
    changes a true difference would make in the clusters not seen to change
    (benchmarks/few_changes.py: the inversion interval alone covered a true drop 0.72 at
    k = 1, 0.80 at k = 2). Where the test rejects 0 (`significant`) the side facing 0
    is kept, so "significant" and "the interval excludes 0" still agree. With too few
    documents for the cluster-robust Tango bound (tango_few_documents: one loss among 60
    questions in 6 documents gave [-1, 1]) a side holds the re-signing interval and the
    Tango bound of independent questions instead (`few_documents`)."""
    lo, hi = lo.copy(), hi.copy()
    cols = np.flatnonzero(binary_columns(D, M) & (k > 0) & (k < few))
    if cols.size == 0:
        return lo, hi, np.zeros(lo.size, dtype=bool), np.zeros(lo.size, dtype=bool)
    t_lo, t_hi, t_few = tango_few_documents(D[:, cols], M[:, cols], S[:, cols], N[:, cols],
                                            level[cols])
    theta = S[:, cols].sum(axis=0) / N[:, cols].sum(axis=0)
    sig = significant[cols]
    keep_lo = sig & (theta > 0)   # the lower end faces 0 and 0 is rejected
    keep_hi = sig & (theta < 0)
    lo[cols] = np.where(keep_lo, lo[cols], np.fmin(lo[cols], t_lo))
    hi[cols] = np.where(keep_hi, hi[cols], np.fmax(hi[cols], t_hi))
    widened = np.zeros(lo.size, dtype=bool)
    widened[cols] = True
    few_docs = np.zeros(lo.size, dtype=bool)
    few_docs[cols] = t_few
    return lo, hi, widened, few_docs
