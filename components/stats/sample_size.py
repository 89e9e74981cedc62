"""Questions needed per comparison for a target minimum detectable effect (MDE).

From a pilot's per-question paired differences d = variant - baseline: their standard
deviation sd gives the standardised effect d_z = MDE / sd, and the needed n is the
smallest number of pairs at which the two-sided paired t-test at the planning alpha
detects d_z with the target power (exact noncentral-t power, ablate.components.stats.power).

The planning alpha is the smallest raw p-value the correction can still call significant
in a family of m comparisons (correction.smallest_threshold): alpha / m for holm,
bonferroni and bh, alpha / (m * H_m) for by, alpha for none. For bonferroni it is the
level of every test, for holm that of its first (hardest) step; for bh it is conservative,
since BH's thresholds rise to alpha for the later ranks when several effects are real.
Planning with it means each comparison is powered even when it is the only real effect
in its family.

The t-test's power stands in for every `stats.test`. The sign-flip test of the mean
difference has the t-test's power as n grows (for differences with finite variance); on
0/1 metrics with many
unchanged questions its exact (McNemar) form is slightly conservative: with differences
-1/0/+1 at probabilities 0.10/0.75/0.15, 10,000 simulated studies at the planned n
rejected in about 78 % where the plan says 80 % (the tests check it stays within 0.05
below). For wilcoxon the t-test is an approximation. The pilot's sd is an estimate: a
small pilot gives an uncertain n.

On clusters (questions that share a document; ablate.components.stats.clusters) the plan
is in clusters, from the cluster-level variance of the pilot: its cluster-robust SE of the
mean (G/(G-1) factor) gives the sd of a cluster, sd_c = sqrt(G_pilot) * SE, the sd of a
cluster's total over the mean cluster size (with singleton clusters, the sd of the
differences). The needed number of clusters G* is the smallest at which the t test with
G* - 1 df at the planning alpha detects d_z = MDE / sd_c with the target power (the same
noncentral t, over clusters), and the needed questions are G* times the pilot's mean used
questions per cluster. The assumption: the new clusters are like the pilot's (the same
variance between and within them, the same mean size). This is the inverse of the MDE in
stats.parquet (ablate.components.stats.inference.planning_mde): planning for the MDE a
pilot reports asks for the pilot's own number of clusters. The design effect, the
clustered SE^2 over the independent one (s^2 / n), is reported for information: about
1 + (m - 1) ICC for clusters of m. An estimate below 1 (chance, on few clusters: questions
sharing a document are not negatively correlated) is planned as 1, that is sd_c = sd /
sqrt(mean cluster size), so the plan never asks for fewer questions than independent ones
would need (the t test on clusters then has fewer df, so a few more). With every question
its own cluster the plan is the question-level one above, exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats as sps

from ablate.components.contract.errors import InputError
from ablate.components.stats.clusters import cluster_se, cluster_sums
from ablate.components.stats.correction import smallest_threshold
from ablate.components.stats.power import ttest_power

MIN_PAIRS = 2  # an sd needs two pairs
MAX_N = 10**9  # beyond this the plan says "more than" instead of a number
SD_ZERO = 1e-12  # an sd (relative to the largest |d|) or a difference below this is 0
FEW_CHANGED = 10  # fewer pilot questions whose score changed: the sd is a rough guess


@dataclass(frozen=True)
class SampleSize:
    """The plan for one comparison; `n` is None when it is undefined (see `reason`)."""

    n_pilot: int      # pairs with both scores defined in the pilot
    delta: float      # observed mean difference (variant - baseline)
    sd: float         # standard deviation of the differences (ddof 1)
    dz: float         # target MDE / sd (NaN when sd is undefined or 0)
    alpha: float      # per-comparison planning alpha
    power: float
    n: int | None     # questions: the needed clusters x the pilot's mean cluster size
    reason: str = ""
    n_changed: int = 0  # pilot pairs whose difference is not 0
    n_clusters_pilot: int = 0  # clusters with a used pilot pair (n_pilot when independent)
    clusters: int | None = None  # needed clusters (n when independent)
    cluster_sd: float = math.nan  # planned with: sqrt(G_pilot) * cluster SE (sd if independent)
    design_effect: float = math.nan  # clustered SE^2 / independent SE^2, as estimated

    @property
    def rough(self) -> bool:
        """A defined n resting on fewer than FEW_CHANGED changed pilot questions."""
        return self.n is not None and self.n_changed < FEW_CHANGED


def check_target(mde: float, power: float, alpha: float) -> None:
    """InputError (naming the option) unless 0 < mde < inf, 0 < power < 1, 0 < alpha < 1."""
    if not (math.isfinite(mde) and mde > 0):
        raise InputError(f"the minimum detectable effect must be positive, got {mde}",
                         field="mde")
    if not 0.0 < power < 1.0:
        raise InputError(f"power must be in (0, 1), got {power}", field="power")
    if not 0.0 < alpha < 1.0:
        raise InputError(f"alpha must be in (0, 1), got {alpha}", field="alpha")


def planning_alpha(alpha: float, correction: str, m: int) -> float:
    """Per-comparison alpha to plan with in a family of m comparisons (module docstring)."""
    return smallest_threshold(correction, max(int(m), 1), alpha)


def n_for_dz(dz: float, alpha: float, power: float = 0.8) -> int | None:
    """Smallest n >= 2 at which the two-sided paired t-test at `alpha` reaches `power`
    for standardised effect dz > 0; None when that n exceeds MAX_N."""
    if not (dz > 0 and math.isfinite(dz)):
        raise ValueError(f"dz must be positive and finite, got {dz}")
    z = sps.norm.ppf(1.0 - alpha / 2.0) + sps.norm.ppf(power)
    guess = max(2, int(math.ceil((z / dz) ** 2)) if z > 0 else 2)
    if guess > MAX_N:
        return None
    lo, hi = 1, guess  # invariant: power(lo) < power (or lo = 1), power(hi) >= power
    while ttest_power(dz, hi, alpha) < power:
        lo, hi = hi, hi * 2
        if hi > MAX_N:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if mid >= 2 and ttest_power(dz, mid, alpha) >= power:
            hi = mid
        else:
            lo = mid
    return hi


def sample_size(differences: np.ndarray, mde: float, *, alpha: float, power: float = 0.8,
                clusters: np.ndarray | None = None) -> SampleSize:
    """Plan one comparison from its pilot differences (non-finite values are dropped, with
    their cluster labels). `alpha` is the per-comparison planning alpha (planning_alpha);
    `clusters`: one label per difference (None: every question its own cluster), the plan
    then in clusters (module docstring)."""
    check_target(mde, power, alpha)
    d = np.asarray(differences, dtype=np.float64)
    keep = np.isfinite(d)
    codes: np.ndarray | None = None
    if clusters is not None:
        labels = np.asarray(clusters)
        if labels.shape != d.shape:
            raise ValueError(f"{labels.shape} cluster labels for {d.shape} differences")
        _, codes = np.unique(labels[keep], return_inverse=True)
    d = d[keep]
    n0 = int(d.size)
    g0 = int(codes.max()) + 1 if codes is not None and codes.size else n0
    delta = float(d.mean()) if n0 else math.nan
    sd = float(d.std(ddof=1)) if n0 >= MIN_PAIRS else math.nan
    changed = int((np.abs(d) > SD_ZERO).sum())
    pilot = SampleSize(n0, delta, sd, math.nan, alpha, power, None, "", changed, g0)
    if n0 < MIN_PAIRS:
        return replace(pilot, reason=f"{n0} pair{'s' if n0 != 1 else ''} with both scores "
                       f"defined in the pilot; at least {MIN_PAIRS} are needed for an sd")
    zero = SD_ZERO * max(1.0, float(np.abs(d).max()))
    if not sd > zero:  # sd of equal floats: ~1e-17
        what = ("no question's score changed" if changed == 0
                else "every question's score changed by the same amount")
        return replace(pilot, sd=0.0,
                       reason=f"{what} in the pilot (sd 0): no variance to plan from")
    if codes is not None and g0 < n0:  # clusters with more than one question
        if g0 < 2:
            return replace(pilot, reason=f"the pilot's {n0} questions are in 1 cluster; at "
                           "least 2 are needed for a cluster-level variance")
        S, N = cluster_sums(d[:, None], np.ones((n0, 1), dtype=bool), codes)
        se = float(cluster_se(S, N)[1][0])
        deff = se**2 / (sd**2 / n0)
        # below 1 (by chance, with few clusters): planned as 1, never under the independent n
        sd_c = math.sqrt(g0) * se if deff >= 1.0 else sd * math.sqrt(g0 / n0)
    else:
        sd_c, deff = sd, 1.0
    dz = mde / sd_c
    g = n_for_dz(dz, alpha, power)
    n = None if g is None else -(-g * n0 // g0)  # ceil(g * mean cluster size), exactly
    if n is None or n > MAX_N:
        return replace(pilot, dz=dz, cluster_sd=sd_c, design_effect=deff, reason=(
            f"needs more than {MAX_N:.0e} {'pairs' if g0 == n0 else 'questions'} (d_z {dz:.2g})"))
    return replace(pilot, dz=dz, n=n, clusters=g, cluster_sd=sd_c, design_effect=deff)
