"""The paired tests a comparison can use (registry "statistical test", `stats.test`).

Each takes the per-cluster sums S of the paired differences and the per-cluster counts N
of used questions (clusters x comparisons; ablate.components.stats.clusters; with every
question its own cluster, S is the differences and N the used mask) and returns
(p-values, how each was computed, Monte-Carlo resamples used per comparison).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ablate.components.contract.errors import InputError
from ablate.components.contract.registry import Registry
from ablate.components.stats.clusters import cluster_ttest
from ablate.components.stats.signflip import signflip_pvalues
from ablate.components.stats.ttest import wilcoxon_pvalues

TestResult = tuple[np.ndarray, list[str], np.ndarray]
PairedTest = Callable[..., TestResult]

TESTS: Registry[PairedTest] = Registry("statistical test", config_field="stats.test")


@TESTS.register("permutation")
def permutation(S: np.ndarray, N: np.ndarray, *, resamples: int, seed: int, alpha: float) -> TestResult:
    """Two-sided sign-flip randomisation test over cluster sums: exact when feasible
    (a grid of values, or few clusters), else Monte Carlo."""
    p, method = signflip_pvalues(S, resamples=resamples, seed=seed)
    used = np.where(np.array(method) == "monte-carlo", resamples, 0).astype(np.int64)
    return p, list(method), used


@TESTS.register("t")
def t(S: np.ndarray, N: np.ndarray, *, resamples: int, seed: int, alpha: float) -> TestResult:
    """Cluster-robust t test (CR1 standard error, G - 1 degrees of freedom); the paired t
    test when every question is its own cluster."""
    p = cluster_ttest(S, N, alpha)[1].copy()
    return p, ["t"] * p.size, np.zeros(p.size, dtype=np.int64)


@TESTS.register("wilcoxon")
def wilcoxon(S: np.ndarray, N: np.ndarray, *, resamples: int, seed: int, alpha: float) -> TestResult:
    """Wilcoxon signed-rank test of independent questions (refused on clusters of several
    questions: its ranks assume independent pairs)."""
    if (N > 1).any():
        g = int((N > 0).any(axis=1).sum())
        raise InputError(f"the wilcoxon test assumes independent questions, but they come in "
                         f"{g} clusters of several questions: use 'permutation' or 't', or "
                         f"turn clustering off (stats.cluster: none)", field="stats.test")
    p = wilcoxon_pvalues(S, N > 0)
    return p.copy(), ["wilcoxon"] * p.size, np.zeros(p.size, dtype=np.int64)
