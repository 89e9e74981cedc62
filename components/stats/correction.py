"""Multiple-comparison corrections, as R's p.adjust (NaN stays NaN, not counted in m).

Also: the smallest per-test threshold a correction can use, which sets how many
Monte-Carlo resamples are needed for any p-value to be able to reach it.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from components.errors import InputError

METHODS = ("holm", "bonferroni", "bh", "by", "none")
_ALIASES = {"fdr_bh": "bh", "fdr": "bh", "fdr_by": "by", "hochberg-bh": "bh"}


def check_method(method: str) -> str:
    """Normalise a correction name; unknown names are an InputError."""
    m = _ALIASES.get(method.lower(), method.lower())
    if m not in METHODS:
        raise InputError(f"unknown correction '{method}' (known: {', '.join(METHODS)})",
                         field="correction")
    return m


def adjust_pvalues(p: Sequence[float], method: str) -> np.ndarray:
    """Adjusted p-values; m = number of non-NaN p-values, NaN positions stay NaN."""
    method = check_method(method)
    arr = np.asarray(p, dtype=np.float64).copy()
    ok = ~np.isnan(arr)
    q = arr[ok]
    m = q.size
    if m == 0 or method == "none":
        return arr
    if method == "bonferroni":
        adj = np.minimum(1.0, m * q)
    elif method == "holm":
        order = np.argsort(q, kind="stable")
        scaled = (m - np.arange(m)) * q[order]
        adj = np.empty(m)
        adj[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    else:  # bh / by: step-up from the largest p
        order = np.argsort(-q, kind="stable")
        rank = m - np.arange(m)  # rank of each p in ascending order
        factor = sum(1.0 / i for i in range(1, m + 1)) if method == "by" else 1.0
        scaled = factor * m / rank * q[order]
        adj = np.empty(m)
        adj[order] = np.minimum(1.0, np.minimum.accumulate(scaled))
    arr[ok] = adj
    return arr


def smallest_threshold(method: str, m: int, alpha: float) -> float:
    """Smallest raw p the correction can still call significant in a family of m."""
    method = check_method(method)
    if method == "none" or m <= 1:
        return alpha
    if method == "by":
        return alpha / (m * sum(1.0 / i for i in range(1, m + 1)))
    return alpha / m


def resamples_needed(method: str, m: int, alpha: float, resolution: float = 10.0) -> int:
    """Monte-Carlo B such that the smallest p, 1/(B+1), is at most threshold/resolution."""
    thr = smallest_threshold(method, m, alpha)
    return max(1, math.ceil(resolution / thr) - 1)
