"""The gate's test: non-inferiority of a pipeline to a reference within an allowed drop D.

Given per-question paired differences oriented so that positive is better (variant -
reference for higher-is-better metrics, reference - variant for lower-is-better ones), a
used mask, the cluster of each question (ablate.components.stats.clusters), the margin D,
alpha and the number m of gated comparisons:

- L, the one-sided (1 - alpha/m) lower confidence bound of the mean difference
  (Bonferroni over the gated metrics and variants): the lower end of the two-sided
  sign-flip inversion interval at level 2 alpha / m (ablate.components.stats.inversion,
  over cluster sums). The gate PASSES only when L > -D: the drop is shown to be smaller
  than D. A drop that is merely "not significant" never passes.
- margin_n, the smallest drop this reference can rule out at its n: with the
  cluster-robust SE and G clusters, (t_{1-alpha/m, G-1} + t_{0.8, G-1}) * SE, the drop
  ruled out with 80 % power if the true change were 0. Infinite when the sign-flip test
  cannot bound the mean at all (too few clusters: 2 / 2^G > 2 alpha / m).
- The verdict when the gate does not pass: FAIL when the reference could rule out D
  (margin_n <= D) or when the drop is shown to be larger than D (the upper end of the
  same interval is below -D); else INCONCLUSIVE, with the questions needed,
  N = ceil(n * (margin_n / D)^2), assuming more clusters of the same sizes (SE shrinks as
  1 / sqrt(G); the t quantiles shrink too, so N is on the safe side), and at least enough
  clusters for the test to bound the mean.

On a 0/1 metric (every used difference -1, 0 or +1) L is the lower of that bound and the
cluster-aware Tango score bound (ablate.components.stats.binary_bound), which accounts for
changes not yet seen: tied pairs alone never pin L to the observed mean, so 24 unchanged
questions do not pass a margin of 0.02 (they rule out no drop below about 0.16). margin_n
is then at least that bound's no-change floor z^2 / (n + z^2) (z the normal quantile of
1 - alpha/m), and the questions needed at least z^2 (1 - D) / D.

A margin of 0 can never be proven (an interval of a mean has width), so D must be > 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import polars as pl

from ablate.components.contract.errors import InputError
from ablate.components.stats.binary_bound import binary_columns, tango_lower
from ablate.components.stats.clusters import cluster_se, cluster_sums, n_clusters
from ablate.components.stats.compare import pair_matrices
from ablate.components.stats.inversion import inversion_interval
from ablate.components.stats.table_prep import prepare_wide

PASS, FAIL, INCONCLUSIVE = "pass", "fail", "inconclusive"
POWER = 0.8  # the power at which margin_n is ruled out when the true change is 0
MC_RESOLUTION = 10.0  # Monte-Carlo sign patterns: the smallest p is at most level / 10


@dataclass(frozen=True)
class NonInferiority:
    """Per column (oriented: positive is better)."""

    delta: np.ndarray      # mean difference over used questions
    lower: np.ndarray      # one-sided (1 - alpha/m) lower bound L (NaN: unbounded)
    upper: np.ndarray      # the same interval's upper end (NaN: unbounded)
    margin_n: np.ndarray   # smallest drop this n can rule out (inf: none)
    n: np.ndarray          # used questions
    n_clusters: np.ndarray
    verdict: list[str]     # pass | fail | inconclusive
    needed_n: np.ndarray   # questions needed to prove D (NaN unless inconclusive)
    margin: float
    alpha: float
    m: int

    @property
    def confidence(self) -> float:
        """The one-sided level of L."""
        return 1.0 - self.alpha / self.m


def check_margin(max_drop: float | None, field: str = "--max-drop") -> float:
    """The allowed drop of the non-inferiority rule: > 0 and finite, else a one-line
    InputError saying why."""
    if max_drop is None:
        raise InputError("the non-inferiority gate needs the allowed drop D (e.g. 0.02 in metric "
                         "units): it passes only when the interval shows the drop is below D",
                         field=field)
    if not math.isfinite(max_drop) or max_drop < 0:
        raise InputError(f"must be a finite number >= 0, got {max_drop}", field=field)
    if max_drop == 0:
        raise InputError("a drop of 0 can never be proven (the interval of a mean always has "
                         "width): give the drop you can accept, e.g. 0.02, or use --rule worse "
                         "(fail only when significantly worse)", field=field)
    return float(max_drop)


def clusters_needed(level: float) -> int:
    """Fewest clusters with which the two-sided sign-flip test can reject at `level`
    (its smallest p is 2 / 2^G)."""
    return max(2, math.ceil(math.log2(2.0 / level) - 1e-12))


def non_inferiority(D: np.ndarray, M: np.ndarray, codes: np.ndarray | None, margin: float, *,
                    alpha: float = 0.05, m: int | None = None, resamples: int = 10_000,
                    seed: int = 0, binary: np.ndarray | None = None) -> NonInferiority:
    """The module docstring's bound, margin and verdict for every column of D (questions x
    columns, positive is better; only used entries count). codes: one cluster code
    (0..G-1) per question, None for independent questions; m: gated comparisons (default:
    the columns of D); resamples: Monte-Carlo sign patterns when the clusters are too many
    to enumerate (raised to MC_RESOLUTION / level); binary: per column, whether the metric
    is a 0/1 metric (its scores, not only its differences, are 0 or 1: the caller knows;
    None: every column whose used differences are -1, 0 or +1, ties-only columns included)."""
    margin = check_margin(margin, field="margin")
    if not 0.0 < alpha < 0.5:
        raise InputError(f"alpha must be in (0, 0.5), got {alpha}", field="alpha")
    m = int(D.shape[1] if m is None else m)
    if m < 1:
        raise InputError("at least one gated comparison", field="m")
    D = np.where(M, np.asarray(D, dtype=np.float64), 0.0)
    codes = np.arange(D.shape[0], dtype=np.int64) if codes is None else np.asarray(codes)
    S, N = cluster_sums(D, M, codes)
    ncol = D.shape[1]
    level = 2.0 * alpha / m
    resamples = max(int(resamples), math.ceil(MC_RESOLUTION / level))
    low, high, _ = inversion_interval(D, M, S, N, np.full(ncol, level), None,
                                      resamples=resamples, seed=seed)
    theta, se, df = cluster_se(S, N)
    n = N.sum(axis=0).astype(np.int64)
    g = n_clusters(N)
    from scipy.special import stdtrit
    with np.errstate(invalid="ignore"):
        factor = stdtrit(df, 1.0 - alpha / m) + stdtrit(df, POWER)
    margin_t = np.where(np.isfinite(se) & (df >= 1), factor * se, np.inf)
    binary = binary_columns(D, M) & (True if binary is None else np.asarray(binary, dtype=bool))
    floor = np.zeros(ncol)
    if binary.any():
        t_low, t_floor = tango_lower(D[:, binary], M[:, binary], S[:, binary], N[:, binary],
                                     alpha / m)
        low[binary] = np.where(np.isfinite(low[binary]), np.fmin(low[binary], t_low), np.nan)
        floor[binary] = np.nan_to_num(t_floor, nan=np.inf)
    margin_n = np.where(np.isfinite(low), np.maximum(margin_t, floor), np.inf)
    g_min = clusters_needed(level)
    verdict, needed = [], np.full(ncol, np.nan)
    for j in range(ncol):
        if n[j] and np.isfinite(low[j]) and low[j] > -margin:
            verdict.append(PASS)
        elif n[j] and (margin_n[j] <= margin or (np.isfinite(high[j]) and high[j] < -margin)):
            verdict.append(FAIL)
        else:
            verdict.append(INCONCLUSIVE)
            if n[j] and g[j] >= 2 and np.isfinite(margin_t[j]):
                want = n[j] * (margin_t[j] / margin) ** 2
                if binary[j] and 0 < floor[j] < 1:  # the no-change floor z^2/(n + z^2) <= D
                    f2 = n[j] * floor[j] / (1.0 - floor[j])
                    want = max(want, f2 * (1.0 - margin) / margin)
                if not np.isfinite(low[j]):
                    want = max(want, n[j] * g_min / g[j])
                needed[j] = float(math.ceil(want - 1e-9))
    mean = np.where(n > 0, theta, np.nan)
    return NonInferiority(mean, low, high, margin_n, n, g, verdict, needed, margin, alpha, m)


def oriented_differences(table: pl.DataFrame, baseline: str,
                         pairs: Sequence[tuple[str, str]], signs: Sequence[int], *,
                         cluster_col: str | None = None, variant_col: str = "variant",
                         qid_col: str = "qid") -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(D, M, codes) of a long per-question table: one column per (metric, variant) pair,
    sign * (variant - baseline) paired on the question id (sign -1 for lower-is-better
    metrics, so positive is better), used where both scores are finite, ties (within
    rounding) 0; codes: the cluster column's codes (None without one)."""
    w = prepare_wide(table, metrics=sorted({mt for mt, _ in pairs}), variant_col=variant_col,
                     qid_col=qid_col, cluster_col=cluster_col)
    if baseline not in w.variants:
        raise InputError(f"no variant '{baseline}' (variants: {', '.join(w.variants)})",
                         field="baseline")
    missing = [v for _, v in pairs if v not in w.variants]
    if missing:
        raise InputError(f"no variant '{missing[0]}' (variants: {', '.join(w.variants)})",
                         field="--variant")
    index = [(w.metrics.index(metric), w.variants.index(variant)) for metric, variant in pairs]
    if not index:
        return np.zeros((len(w.qids), 0)), np.zeros((len(w.qids), 0), dtype=bool), None
    D, M, _ = pair_matrices(w, w.variants.index(baseline), index)
    D = D * np.asarray(signs, dtype=np.float64)
    return D, M, (w.clusters if cluster_col is not None else None)

