"""The paired tests a comparison can use (registry "statistical test", `stats.test`).

Each takes the differences matrix D (questions x comparisons, 0 where unused or tied)
and the used mask M, and returns (p-values, how each was computed, Monte-Carlo
resamples used per comparison).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ablate.components.registry import Registry
from ablate.components.stats.signflip import signflip_pvalues
from ablate.components.stats.ttest import paired_ttest, wilcoxon_pvalues

TestResult = tuple[np.ndarray, list[str], np.ndarray]
PairedTest = Callable[..., TestResult]

TESTS: Registry[PairedTest] = Registry("statistical test", config_field="stats.test")


@TESTS.register("permutation")
def permutation(D: np.ndarray, M: np.ndarray, *, resamples: int, seed: int, alpha: float) -> TestResult:
    """Two-sided sign-flip randomisation test: exact when feasible, else Monte Carlo."""
    p, method = signflip_pvalues(D, resamples=resamples, seed=seed)
    used = np.where(np.array(method) == "monte-carlo", resamples, 0).astype(np.int64)
    return p, list(method), used


@TESTS.register("t")
def t(D: np.ndarray, M: np.ndarray, *, resamples: int, seed: int, alpha: float) -> TestResult:
    """Paired t test."""
    p = paired_ttest(D, M, alpha)[1].copy()
    return p, ["t"] * p.size, np.zeros(p.size, dtype=np.int64)


@TESTS.register("wilcoxon")
def wilcoxon(D: np.ndarray, M: np.ndarray, *, resamples: int, seed: int, alpha: float) -> TestResult:
    """Wilcoxon signed-rank test."""
    p = wilcoxon_pvalues(D, M)
    return p.copy(), ["wilcoxon"] * p.size, np.zeros(p.size, dtype=np.int64)
