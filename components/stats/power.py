"""Minimum detectable effect of the paired design at a given power and alpha.

Solved exactly with the noncentral t distribution (two-sided paired t-test, both tails),
the same quantity as statsmodels' TTestPower.solve_power(effect_size=None). The effect
depends only on (n, alpha, power) in d_z units; times the sd of the differences it is in
the metric's own units.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np


def ttest_power(dz: float, n: int, alpha: float) -> float:
    """Power of the two-sided paired t-test at standardised effect dz with n pairs."""
    # scipy.special's t quantile and noncentral-t CDF, which scipy.stats.t.ppf and
    # scipy.stats.nct.cdf call, without importing scipy.stats
    from scipy.special import nctdtr, stdtrit
    df = n - 1
    crit = float(stdtrit(df, 1.0 - alpha / 2.0))
    nc = dz * np.sqrt(n)
    upper = 1.0 - float(nctdtr(df, nc, crit))
    lower = float(nctdtr(df, nc, -crit))  # NaN when it underflows
    return upper + (lower if np.isfinite(lower) else 0.0)


@lru_cache(maxsize=4096)
def mde_dz(n: int, alpha: float, power: float = 0.8) -> float:
    """Smallest d_z detected with the given power (NaN when n < 2): power rises with d_z,
    so bisection on [0, hi] to 1e-12 (no scipy.optimize import on the analysis's path)."""
    if n < 2:
        return float("nan")
    hi = 1.0
    while ttest_power(hi, n, alpha) < power:
        hi *= 2.0
        if hi > 1e6:
            return float("nan")
    lo = 0.0
    while hi - lo > 1e-12 * max(1.0, hi):
        mid = 0.5 * (lo + hi)
        if ttest_power(mid, n, alpha) < power:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def mde(n_used: np.ndarray, sd: np.ndarray, alpha: float, power: float = 0.8) -> np.ndarray:
    """MDE in metric units per comparison: mde_dz(n) * sd (NaN when sd is 0 or NaN)."""
    dz = np.array([mde_dz(int(n), float(alpha), float(power)) for n in n_used])
    out = dz * sd
    out[~(sd > 0)] = np.nan
    return out
