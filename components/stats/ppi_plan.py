"""How many labels a judge-corrected estimate needs (ablate.components.stats.ppi): from a
pilot (judge scores of all questions, some of them labelled), the labelled questions, and
the clusters they fall in, that bring the interval's half-width down to a target.

The estimator's variance (ppi module docstring) splits into a part that shrinks with the
questions judged (N) and a part that shrinks with the labels (n). With F_g, R_g the
cluster sums of f - mean(f) over all questions and of r - mean(r), r = y - lambda f, over
the labelled ones, and labels drawn at random among the questions:

    SE^2 = c * ( (K + rho_r w) / N + s_r^2 / n ),   K = lambda^2 v_f + 2 lambda v_fr,

- s_r^2: the rectifier's variance per labelled question (how wrong the judge is);
- rho_r: the within-cluster covariance of the rectifier (sum over clusters of the
  products of two labelled questions' residuals, over the number of such pairs; 0 when
  negative or when no cluster has two labels); w = sum_g C_g (C_g - 1) / N, the pilot's
  cluster sizes C_g: with a share q of questions labelled, a cluster holds about
  C_g (C_g - 1) q^2 pairs of labels, so this part does not shrink with more labels;
- v_f = sum F_g^2 / N and v_fr = sum F_g R_g / n: the judge scores' part;
- c = G_L / (G_L - 1), G_L the expected labelled clusters, sum_g 1 - (1 - q)^C_g.

For a target half-width h at level 1 - alpha, asymptotically (z quantile, c = 1):

    n = s_r^2 / ((h / z)^2 - (K + rho_r w) / N),

and no number of labels suffices when h / z is at most sqrt((K + rho_r w) / N) (judge
more questions or use a better judge). The plan refines this with the t quantile and CR1
factor of the analysis: the smallest n whose predicted half-width t(G_L - 1) * SE is at
most h. A study of `n_all` questions other than the pilot's N is taken as more (fewer)
clusters of the pilot's sizes. lambda: a given one, else the pilot's cross-fitted PPI++
judge (ppi.rescaled_judge) as the analysis uses it. For a paired difference pass the
paired inputs (ppi.paired_inputs). The variances are the pilot's: a judge that behaves
as in the pilot and labels drawn at random among the questions (a pilot labelled by
whole clusters overstates rho_r's share of its own variance).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ablate.components.stats.ppi import cluster_codes, ppi_parts, rescaled_judge


@dataclass(frozen=True)
class LabelPlan:
    """Labels needed for a target half-width (module docstring)."""

    labels: int | None  # labelled questions (None: not reachable, see reason)
    clusters: int | None  # the labelled clusters they are expected to fall in
    half_width: float  # the target
    predicted: float  # the predicted half-width at `labels`
    n_all: int  # questions judged in the planned study
    lam: float
    reason: str = ""  # why labels is None


@dataclass(frozen=True)
class _Model:
    fixed: float  # K + rho_r w: the part of N * SE^2 / c that labels do not reduce
    s2: float  # s_r^2
    sizes: np.ndarray  # the pilot's cluster sizes C_g
    n_all: int
    scale: float  # n_all / pilot N


def _model(f, y, codes: np.ndarray, lam: float, n_all: int | None) -> _Model:
    p = ppi_parts(f, y, codes)
    R = p.Ry - lam * p.Ff
    v_f = float((p.F ** 2).sum()) / p.N
    v_fr = float((p.F * R).sum()) / p.n
    f_a, y_a = np.asarray(f, dtype=np.float64), np.asarray(y, dtype=np.float64)
    lab = np.isfinite(f_a) & np.isfinite(y_a)
    r = y_a[lab] - lam * f_a[lab]
    s2 = float(((r - r.mean()) ** 2).sum()) / p.n
    pairs = float((p.count_labelled * (p.count_labelled - 1.0)).sum())
    rho = max(0.0, (float((R ** 2).sum()) - p.n * s2) / pairs) if pairs > 0 else 0.0
    sizes = p.count[p.count > 0]
    w = float((sizes * (sizes - 1.0)).sum()) / p.N
    total = p.N if n_all is None else int(n_all)
    if total < 2:
        raise ValueError(f"n_all must be at least 2, got {total}")
    return _Model(lam * lam * v_f + 2.0 * lam * v_fr + rho * w, s2, sizes, total, total / p.N)


def _clusters(m: _Model, labels: int) -> float:
    """Expected labelled clusters with `labels` drawn at random among the questions."""
    q = min(1.0, labels / m.n_all)
    return m.scale * float((1.0 - (1.0 - q) ** m.sizes).sum())


def _half_width(m: _Model, labels: int, alpha: float) -> float:
    from scipy.special import stdtrit
    g = _clusters(m, labels)
    if labels < 1 or g < 2.0:
        return math.inf
    var = g / (g - 1.0) * max(m.fixed / m.n_all + m.s2 / labels, 0.0)
    return float(stdtrit(g - 1.0, 1.0 - alpha / 2.0)) * math.sqrt(var)


def _setup(f, y, clusters, n_all: int | None, lam: float | None
           ) -> tuple[_Model | None, float, str]:
    codes = cluster_codes(clusters, np.size(f))
    parts = ppi_parts(f, y, codes)
    if parts.n == 0 or parts.clusters_labelled < 2:
        return None, math.nan, (f"the pilot has {parts.clusters_labelled} labelled clusters: "
                                "at least 2 are needed")
    if lam is None:
        f, lam_used = rescaled_judge(f, y, codes)
        return _model(f, y, codes, 1.0, n_all), lam_used, ""
    return _model(f, y, codes, lam, n_all), lam, ""


def predicted_half_width(f, y, clusters=None, labels: int = 0, *, alpha: float = 0.05,
                         n_all: int | None = None, lam: float | None = None) -> float:
    """The half-width the pilot predicts with `labels` labelled questions (NaN when the
    pilot cannot say, inf below 2 expected labelled clusters)."""
    m, _, _ = _setup(f, y, clusters, n_all, lam)
    return math.nan if m is None else _half_width(m, int(labels), alpha)


def plan_labels(f, y, clusters=None, *, half_width: float, alpha: float = 0.05,
                n_all: int | None = None, lam: float | None = None) -> LabelPlan:
    """The smallest number of labels whose predicted half-width is at most `half_width`,
    for a study judging `n_all` questions (default: the pilot's), from the pilot's judge
    scores `f`, labels `y` (NaN: unlabelled) and clusters (module docstring)."""
    if not half_width > 0.0:
        raise ValueError(f"half_width must be positive, got {half_width}")
    m, lam_used, why = _setup(f, y, clusters, n_all, lam)
    if m is None:
        total = int(n_all or np.isfinite(np.asarray(f, dtype=np.float64)).sum())
        return LabelPlan(None, None, half_width, math.nan, total, lam_used, why)
    full = _half_width(m, m.n_all, alpha)
    if full > half_width:
        return LabelPlan(None, None, half_width, full, m.n_all, lam_used,
                         f"even labelling all {m.n_all} questions gives a half-width of "
                         f"{full:.3g}: judge more questions or use a better judge")
    lo, hi = 1, m.n_all  # the half-width falls with the labels
    while lo < hi:
        mid = (lo + hi) // 2
        if _half_width(m, mid, alpha) <= half_width:
            hi = mid
        else:
            lo = mid + 1
    return LabelPlan(lo, round(_clusters(m, lo)), half_width, _half_width(m, lo, alpha),
                     m.n_all, lam_used)
