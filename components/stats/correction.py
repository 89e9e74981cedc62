"""Multiple-comparison corrections, as R's p.adjust (NaN stays NaN, not counted in m),
registered by name (registry "correction", `stats.correction`).

Each entry adjusts the m non-NaN p-values of one family and knows the smallest raw p it
can still call significant, which sets how many Monte-Carlo resamples are needed for
any p-value to be able to reach it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ablate.components.contract.errors import InputError
from ablate.components.contract.registry import Registry


@dataclass(frozen=True)
class Correction:
    adjust: Callable[[np.ndarray], np.ndarray]  # the m non-NaN p-values -> adjusted
    smallest: Callable[[int, float], float]  # (m, alpha) -> smallest significant raw p


CORRECTIONS: Registry[Correction] = Registry("correction", config_field="stats.correction")
_ALIASES = {"fdr_bh": "bh", "fdr": "bh", "fdr_by": "by", "hochberg-bh": "bh"}


def _per_test(m: int, alpha: float) -> float:
    return alpha / m if m > 1 else alpha


def _holm(q: np.ndarray) -> np.ndarray:
    m = q.size
    order = np.argsort(q, kind="stable")
    scaled = (m - np.arange(m)) * q[order]
    adj = np.empty(m)
    adj[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return adj


def _step_up(q: np.ndarray, factor: float) -> np.ndarray:
    """BH / BY: step-up from the largest p."""
    m = q.size
    order = np.argsort(-q, kind="stable")
    rank = m - np.arange(m)  # rank of each p in ascending order
    scaled = factor * m / rank * q[order]
    adj = np.empty(m)
    adj[order] = np.minimum(1.0, np.minimum.accumulate(scaled))
    return adj


def _harmonic(m: int) -> float:
    return sum(1.0 / i for i in range(1, m + 1))


CORRECTIONS.register("holm")(Correction(_holm, _per_test))
CORRECTIONS.register("bonferroni")(Correction(lambda q: np.minimum(1.0, q.size * q), _per_test))
CORRECTIONS.register("bh")(Correction(lambda q: _step_up(q, 1.0), _per_test))
CORRECTIONS.register("by")(Correction(
    lambda q: _step_up(q, _harmonic(q.size)),
    lambda m, alpha: alpha / (m * _harmonic(m)) if m > 1 else alpha))
CORRECTIONS.register("none")(Correction(lambda q: q, lambda m, alpha: alpha))


def check_method(method: str) -> str:
    """Normalise a correction name; unknown names are an InputError."""
    m = _ALIASES.get(method.lower(), method.lower())
    if m not in CORRECTIONS:
        raise InputError(f"unknown correction '{method}' (known: {', '.join(CORRECTIONS.names())})",
                         field="correction")
    return m


def adjust_pvalues(p: Sequence[float] | np.ndarray, method: str) -> np.ndarray:
    """Adjusted p-values; m = number of non-NaN p-values, NaN positions stay NaN."""
    corr = CORRECTIONS.get(check_method(method))
    arr = np.asarray(p, dtype=np.float64).copy()
    ok = ~np.isnan(arr)
    if ok.any():
        arr[ok] = corr.adjust(arr[ok])
    return arr


def smallest_threshold(method: str, m: int, alpha: float) -> float:
    """Smallest raw p the correction can still call significant in a family of m."""
    return CORRECTIONS.get(check_method(method)).smallest(m, alpha)


def resamples_needed(method: str, m: int, alpha: float, resolution: float = 10.0) -> int:
    """Monte-Carlo B such that the smallest p, 1/(B+1), is at most threshold/resolution."""
    thr = smallest_threshold(method, m, alpha)
    return max(1, math.ceil(resolution / thr) - 1)
