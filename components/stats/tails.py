"""P10: where the worst tenth of questions starts, beside the mean.

The rule (nearest rank, Hyndman and Fan's type 1, numpy's `inverted_cdf`): of the n
questions with a finite score, sort the scores from worst to best and take the k-th,
k = ceil(n / 10). Worst is lowest for a higher-is-better metric (the 10th percentile) and
highest for a lower-is-better one (tokens, cost, latency, answer risk: the 90th
percentile); a metric without a direction takes the 10th percentile. So P10 = x says: at
least a tenth of the questions score x or worse, and fewer than a tenth score worse than
x. It is always a score some question has (no interpolation), depends on nothing but the
scores (deterministic, order-free), and on a 0/1 metric it is 0 exactly when at least a
tenth of the questions score 0. Undefined scores (null, NaN, ±inf: an unanswerable
question's retrieval metrics) are left out, as the mean leaves them out; with none left
P10 is NaN. P10 is descriptive: no test, interval or correction is attached to it.
"""

from __future__ import annotations

import numpy as np

from ablate.components.metrics.registry import direction

TAIL = 0.1  # the share of questions the tail holds
SLICE_MARK = " @slice "  # a slice's widened column (ablate.components.stats.slices takes it from here)


def _rank(n: np.ndarray) -> np.ndarray:
    """k = ceil(n / 10) in integers (no float rounding at n a multiple of 10)."""
    return -(-n // 10)


def lower_is_better(metric: str) -> bool:
    """Whether a metric column's worst tenth is its top (the registry's direction, else the
    one its sweep recorded; a slice's column: its metric's). A metric the registry does not know, or any metric while no
    component is registered (a plain table compared from Python without
    ablate.components.catalogue.load()), counts as higher-is-better, as everywhere else."""
    try:  # a slice's widened column (stats.slices: `<metric> @slice <column>=<value>`)
        return direction(metric.partition(SLICE_MARK)[0]) == "lower"
    except RuntimeError:  # the built-in components are not registered in this process
        return False


def worst_tenth(values: np.ndarray, mask: np.ndarray, lower: np.ndarray) -> np.ndarray:
    """Per column of `values` (questions x columns), P10 over the rows where `mask` is True
    and the value is finite; `lower`: per column, whether lower is better. NaN where a
    column has no such value."""
    values = np.asarray(values, dtype=np.float64)
    use = np.asarray(mask, dtype=bool) & np.isfinite(values)
    sign = np.where(np.asarray(lower, dtype=bool), -1.0, 1.0)
    ranked = np.sort(np.where(use, values * sign, np.inf), axis=0)  # worst first, unused last
    n = use.sum(axis=0)
    k = _rank(n)
    out = np.full(values.shape[1], np.nan)
    cols = np.flatnonzero(n > 0)
    out[cols] = ranked[k[cols] - 1, cols] * sign[cols]
    return out


def worst_tenth_of(values: np.ndarray, lower: bool = False) -> float:
    """P10 of one column of scores (any undefined ones left out)."""
    col = np.asarray(values, dtype=np.float64).reshape(-1, 1)
    return float(worst_tenth(col, np.ones_like(col, dtype=bool), np.array([lower]))[0])
