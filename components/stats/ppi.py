"""Judge-corrected estimates: prediction-powered inference (PPI; Angelopoulos, Bates,
Fannjiang, Jordan & Zrnic 2023, "Prediction-powered inference") with PPI++ power tuning
(Angelopoulos, Duchi & Zrnic 2023, "PPI++: efficient prediction-powered inference"), for a
mean and for the paired difference of a variant against the baseline, on clusters.

Inputs per question i: the judge's score f_i (NaN: undefined, e.g. a judge failure:
excluded and counted), a gold or human label y_i (NaN: unlabelled) and its cluster. A is
the set of questions with a defined f (N of them, G_A clusters), L the labelled ones in A
(n, G_L clusters; a label on a question whose f is undefined is counted, not used). Then

    theta = lambda * mean_A(f) + mean_L(y - lambda * f).

lambda = 1 is classic PPI, lambda = 0 the labelled-only mean. By default lambda is tuned
(PPI++: the value in [0, 1] that minimises the estimated variance below) and
**cross-fitted** over clusters: the questions of cluster g use lambda_-g, tuned on the
other clusters, i.e. classic PPI with the rescaled judge lambda_-g * f. (Tuning lambda on
the same data and plugging it in made the estimated SE about 5 % too small with 20-25
clusters: type-I error 0.06-0.07 at alpha 0.05 in benchmarks/ppi_validity.py; the
cross-fitted lambda brings it back to the level of a fixed lambda.) The labelled
questions must be a random subset of the questions (by question or by cluster), chosen
without looking at their scores; the correction then removes any bias of the judge, and a
weak judge gets a lambda near 0: a wide interval instead of a wrong conclusion.

Paired difference (`ppi_paired`): the same estimator on d_f = f_v - f_b (questions where
both are defined) and d_y = y_v - y_b (questions labelled for both answers), so
Delta = lambda * mean_A(d_f) + mean_L(d_y - lambda * d_f).

Variance: the labelled questions are also among the N, and questions of one cluster are
correlated, so the two means are not independent. The estimator is linearised exactly:
per question, u_i = lambda (f_i - mean_A f) + (N / n) 1[i in L] (r_i - mean_L r) with
r = y - lambda f, and

    SE^2 = sum_g w_g U_g^2 / N^2,   U_g = sum of u_i over cluster g,

the cluster-robust variance of clusters.py applied to the u_i with CR2-type weights
taken at the labelled clusters (the rectifier term, which dominates, is estimated from
G_L clusters): w_g = 1 / (1 - n_g / n), the inverse of 1 minus the cluster's share of
the labels, where it has labels, G_L / (G_L - 1) where it has none. With equal labelled
sizes (and on independent questions) every w_g is G_L / (G_L - 1), CR1's factor.
(Until issue 38 the factor was G_L / (G_L - 1) for every cluster and the df G_L - 1: with
one document holding 40 % of the questions the interval covered 0.82 instead of 0.95;
with these weights and the df below, 0.94.) This keeps the covariance of the two
terms (no independence assumption). With U_g = lambda A_g + B_g the tuned lambda is
-sum A_g B_g / sum A_g^2, clipped to [0, 1] (lambda_-g: the same sums without cluster g).
With the cross-fitted lambda the SE is classic PPI's on lambda_-g * f, each lambda_-g
taken as fixed (it does not depend on cluster g's questions). theta / SE is referred to
Student's t with the Bell-McCaffrey degrees of freedom of the labelled cluster sizes
(G_L - 1 when they are equal, fewer when one document holds most labels; issue 38),
two-sided p for H0: theta = 0.

Undefined: no question with a defined f, no labelled question, or fewer than 2 labelled
clusters: NaN standard error, p and interval with a `reason` (the estimate itself is
given when there is at least one label). Zero SE: p = 0 when the estimate is non-zero,
NaN ("no variation") when it is 0, and a zero-width interval, as clusters.cluster_ttest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ablate.components.stats.clusters import bm_df, cluster_sums


@dataclass(frozen=True)
class PPIResult:
    """A judge-corrected mean or paired difference (module docstring)."""

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    p: float
    n_all: int  # questions with a defined judge score (N)
    n_labelled: int  # of those, labelled (n)
    clusters_all: int  # G_A
    clusters_labelled: int  # G_L
    lam: float  # the lambda used (given; cross-fitted: the question-weighted mean lambda_-g)
    df: float  # Bell-McCaffrey df of the labelled cluster sizes (G_L - 1 when equal)
    alpha: float  # the interval is at 1 - alpha
    n_undefined: int = 0  # questions whose judge score is undefined
    labels_unused: int = 0  # labels on questions whose judge score is undefined
    reason: str = ""  # why se / p / interval are NaN (or "no variation"); "" when defined


@dataclass(frozen=True)
class Parts:
    """The per-cluster pieces every PPI quantity is built from (rows: clusters).
    F: sum of f - mean_A(f) over the cluster's A questions; Ff, Ry: sums of
    f - mean_L(f) and y - mean_L(y) over its labelled questions; count, count_labelled:
    its A and L questions."""

    N: int
    n: int
    clusters_all: int
    clusters_labelled: int
    n_undefined: int
    labels_unused: int
    mean_f: float
    mean_f_labelled: float
    mean_y: float
    F: np.ndarray
    Ff: np.ndarray
    Ry: np.ndarray
    count: np.ndarray
    count_labelled: np.ndarray

    def estimate(self, lam: float) -> float:
        return lam * self.mean_f + self.mean_y - lam * self.mean_f_labelled

    @property
    def A(self) -> np.ndarray:
        """U_g = lam * A_g + B_g."""
        return self.F - self.N / self.n * self.Ff

    @property
    def B(self) -> np.ndarray:
        return self.N / self.n * self.Ry


def cluster_codes(clusters, size: int) -> np.ndarray:
    """Codes 0..G-1 of the cluster labels (None: every question its own cluster)."""
    if clusters is None:
        return np.arange(size, dtype=np.int64)
    labels = np.asarray(clusters)
    if labels.shape != (size,):
        raise ValueError(f"clusters: expected {size} labels, got shape {labels.shape}")
    return np.unique(labels, return_inverse=True)[1].astype(np.int64).ravel()


def ppi_parts(f, y, clusters=None) -> Parts:
    """The cluster sums of f over A and of f and y over L (module docstring)."""
    f = np.asarray(f, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if f.ndim != 1 or f.shape != y.shape:
        raise ValueError(f"f and y must be 1-d of one length, got {f.shape} and {y.shape}")
    codes = cluster_codes(clusters, f.size)
    in_a = np.isfinite(f)
    in_l = in_a & np.isfinite(y)
    D = np.column_stack([np.where(in_a, f, 0.0), np.where(in_l, f, 0.0), np.where(in_l, y, 0.0)])
    S, C = cluster_sums(D, np.column_stack([in_a, in_l, in_l]), codes)
    N, n = int(in_a.sum()), int(in_l.sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        mf, mfl, my = S[:, 0].sum() / N, S[:, 1].sum() / n, S[:, 2].sum() / n
    return Parts(N, n, int((C[:, 0] > 0).sum()), int((C[:, 1] > 0).sum()),
                 int((~in_a).sum()), int((~in_a & np.isfinite(y)).sum()),
                 float(mf), float(mfl), float(my), S[:, 0] - mf * C[:, 0],
                 S[:, 1] - mfl * C[:, 1], S[:, 2] - my * C[:, 2], C[:, 0], C[:, 1])


def tuned_lambda(parts: Parts) -> float:
    """PPI++: the lambda in [0, 1] minimising sum_g (lam A_g + B_g)^2 (1 when f does not
    vary, where lambda does not change the estimate)."""
    a, b = parts.A, parts.B
    den = float((a * a).sum())
    if not den > 0.0:
        return 1.0
    return float(min(1.0, max(0.0, -float((a * b).sum()) / den)))


def crossfit_lambdas(parts: Parts) -> np.ndarray:
    """Per cluster g, lambda_-g: tuned_lambda on the other clusters' sums (1 where that
    is undefined)."""
    a, b = parts.A, parts.B
    with np.errstate(invalid="ignore", divide="ignore"):
        lam = -(float((a * b).sum()) - a * b) / (float((a * a).sum()) - a * a)
    return np.where(np.isfinite(lam), np.clip(lam, 0.0, 1.0), 1.0)


def _influence_sums(parts: Parts, lam: float) -> np.ndarray:
    """U_g: per cluster, the sum of the linearised estimator's terms u_i, times N."""
    return lam * parts.A + parts.B


def ppi_df(parts: Parts) -> float:
    """The t referent's degrees of freedom: the Bell-McCaffrey df of the labelled cluster
    sizes (G_L - 1 for equal sizes; clusters.bm_df)."""
    return float(bm_df(parts.count_labelled[:, None].astype(np.float64))[0])


def ppi_weights(parts: Parts) -> np.ndarray:
    """Per cluster, the CR2-type weight of U_g^2 (module docstring): 1 / (1 - n_g / n) where
    it has labels, G_L / (G_L - 1) where it has none (equal labelled sizes or independent
    questions: G_L / (G_L - 1) everywhere, the CR1 factor)."""
    g_l = parts.clusters_labelled
    lab = parts.count_labelled.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(lab < parts.n, 1.0 / (1.0 - lab / parts.n), np.inf)
    return np.where(lab > 0, w, g_l / (g_l - 1.0))


def ppi_se(parts: Parts, lam: float) -> float:
    """The cluster-robust SE at lambda (module docstring): sqrt(sum_g w_g U_g^2) / N with
    ppi_weights. NaN below 2 labelled clusters."""
    if parts.clusters_labelled < 2:
        return math.nan
    U = _influence_sums(parts, lam)
    return float(math.sqrt(float((ppi_weights(parts) * U * U).sum())) / parts.N)


def _t_quantile(df: float, alpha: float) -> float:
    from scipy.special import stdtrit
    return float(stdtrit(df, 1.0 - alpha / 2.0))


def interval(result: PPIResult, alpha: float) -> tuple[float, float]:
    """The interval at 1 - alpha (e.g. the level matching a corrected p)."""
    if not (math.isfinite(result.se) and result.df >= 1):
        return math.nan, math.nan
    half = _t_quantile(result.df, alpha) * result.se
    return result.estimate - half, result.estimate + half


def _result(p: Parts, alpha: float, est: float, lam: float, se: float = math.nan,
            ci: tuple[float, float] = (math.nan, math.nan), pval: float = math.nan,
            reason: str = "") -> PPIResult:
    return PPIResult(est, se, ci[0], ci[1], pval, p.N, p.n, p.clusters_all,
                     p.clusters_labelled, lam,
                     ppi_df(p) if p.clusters_labelled >= 2 else float(p.clusters_labelled - 1), alpha,
                     p.n_undefined, p.labels_unused, reason)


def ppi_result(parts: Parts, *, alpha: float = 0.05, lam: float | None = None) -> PPIResult:
    """Estimate, SE, t interval and p from the parts at a fixed lambda (None: the
    in-sample tuned_lambda, not cross-fitted; 1 below 2 labelled clusters)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if lam is not None and not math.isfinite(lam):
        raise ValueError(f"lambda must be finite, got {lam}")
    p = parts
    if p.N == 0 or p.n == 0:
        why = ("no question with a defined judge score" if p.N == 0
               else "no labelled question with a defined judge score")
        return _result(p, alpha, math.nan, math.nan if lam is None else lam, reason=why)
    if lam is None:
        lam = tuned_lambda(p) if p.clusters_labelled >= 2 else 1.0
    est = p.estimate(lam)
    if p.clusters_labelled < 2:
        return _result(p, alpha, est, lam, reason=f"{p.clusters_labelled} labelled cluster: "
                       "at least 2 are needed for a standard error")
    se = ppi_se(p, lam)
    ci = interval(_result(p, alpha, est, lam, se), alpha)
    if se > 0.0:
        from scipy.special import stdtr
        return _result(p, alpha, est, lam, se, ci, float(2.0 * stdtr(ppi_df(p), -abs(est / se))))
    if est != 0.0:
        return _result(p, alpha, est, lam, se, ci, 0.0)
    return _result(p, alpha, est, lam, se, ci, reason="no variation: every value is equal")


def ppi_mean(f, y, clusters=None, *, alpha: float = 0.05,
             lam: float | None = None) -> PPIResult:
    """The judge-corrected mean of one variant: judge scores `f` for every question (NaN:
    undefined), labels `y` (NaN: unlabelled), one cluster label per question (None:
    independent questions); `lam` None: PPI++ tuned and cross-fitted over clusters,
    1: classic PPI, 0: labelled only."""
    if lam is not None:
        return ppi_result(ppi_parts(f, y, clusters), alpha=alpha, lam=lam)
    codes = cluster_codes(clusters, np.size(f))
    f_cf, lam_mean = rescaled_judge(f, y, codes)
    res = ppi_result(ppi_parts(f_cf, y, codes), alpha=alpha, lam=1.0)
    return replace(res, lam=lam_mean if res.n_labelled else math.nan)


def rescaled_judge(f, y, codes: np.ndarray) -> tuple[np.ndarray, float]:
    """The cross-fitted PPI++ judge: (lambda_-g * f per question, the question-weighted
    mean lambda_-g); (f, 1.0), classic PPI, below 2 labelled clusters."""
    f = np.asarray(f, dtype=np.float64)
    parts = ppi_parts(f, y, codes)
    if parts.clusters_labelled < 2:
        return f, 1.0
    lam_g = crossfit_lambdas(parts)
    return lam_g[codes] * f, float((lam_g * parts.count).sum() / parts.N)


def paired_inputs(f_v, f_b, y_v, y_b) -> tuple[np.ndarray, np.ndarray]:
    """(d_f, d_y): the paired judge difference (NaN unless both scores are finite) and the
    paired label difference (NaN unless the question is labelled for both answers)."""
    arrays = [np.asarray(a, dtype=np.float64) for a in (f_v, f_b, y_v, y_b)]
    if len({a.shape for a in arrays}) != 1:
        raise ValueError("f_v, f_b, y_v, y_b must have one shape")
    fv, fb, yv, yb = arrays
    with np.errstate(invalid="ignore"):
        d_f = np.where(np.isfinite(fv) & np.isfinite(fb), fv - fb, np.nan)
        d_y = np.where(np.isfinite(yv) & np.isfinite(yb), yv - yb, np.nan)
    return d_f, d_y


def ppi_paired(f_v, f_b, y_v, y_b, clusters=None, *, alpha: float = 0.05,
               lam: float | None = None) -> PPIResult:
    """The judge-corrected paired difference variant - baseline, H0: Delta = 0. Labels
    belong to an answer: y_v labels the variant's answer, y_b the baseline's."""
    d_f, d_y = paired_inputs(f_v, f_b, y_v, y_b)
    return ppi_mean(d_f, d_y, clusters, alpha=alpha, lam=lam)
