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
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from ablate.components.errors import InputError
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
    n: int | None
    reason: str = ""
    n_changed: int = 0  # pilot pairs whose difference is not 0

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


def sample_size(differences: np.ndarray, mde: float, *, alpha: float,
                power: float = 0.8) -> SampleSize:
    """Plan one comparison from its pilot differences (non-finite values are dropped).
    `alpha` is the per-comparison planning alpha (planning_alpha)."""
    check_target(mde, power, alpha)
    d = np.asarray(differences, dtype=np.float64)
    d = d[np.isfinite(d)]
    n0 = int(d.size)
    delta = float(d.mean()) if n0 else math.nan
    sd = float(d.std(ddof=1)) if n0 >= MIN_PAIRS else math.nan
    changed = int((np.abs(d) > SD_ZERO).sum())

    def undefined(reason: str) -> SampleSize:
        return SampleSize(n0, delta, sd, math.nan, alpha, power, None, reason, changed)

    if n0 < MIN_PAIRS:
        return undefined(f"{n0} pair{'s' if n0 != 1 else ''} with both scores defined in "
                         f"the pilot; at least {MIN_PAIRS} are needed for an sd")
    if not sd > SD_ZERO * max(1.0, float(np.abs(d).max())):  # sd of equal floats: ~1e-17
        what = ("no question's score changed" if changed == 0
                else "every question's score changed by the same amount")
        return SampleSize(n0, delta, 0.0, math.nan, alpha, power, None,
                          f"{what} in the pilot (sd 0): no variance to plan from", changed)
    dz = mde / sd
    n = n_for_dz(dz, alpha, power)
    if n is None:
        return SampleSize(n0, delta, sd, dz, alpha, power, None,
                          f"needs more than {MAX_N:.0e} pairs (d_z {dz:.2g})", changed)
    return SampleSize(n0, delta, sd, dz, alpha, power, n, "", changed)
