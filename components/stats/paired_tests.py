"""The paired tests a comparison can use (registry "statistical test", `stats.test`).

Each takes the per-cluster sums S of the paired differences and the per-cluster counts N
of used questions (clusters x comparisons; ablate.components.stats.clusters; with every
question its own cluster, S is the differences and N the used mask) and returns
(p-values, how each was computed, Monte-Carlo resamples used per comparison).

Each is registered with its abilities (ablate.components.stats.abilities): which interval
it inverts into, its smallest p, how the self-test computes it, whether `ablate power`
plans it exactly, what it assumes. Every place that treats tests differently reads them
through `abilities(name)`, never the test's name.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ablate.components.contract.errors import InputError
from ablate.components.contract.registry import Declaration, Registry
from ablate.components.stats.abilities import (
    SIGNFLIP_ASSUMPTION,
    SIGNFLIP_SMALLEST_P,
    Abilities,
    abilities_of,
    check_abilities,
)
from ablate.components.stats.clusters import cluster_ttest
from ablate.components.stats.signflip import signflip_pvalues
from ablate.components.stats.ttest import wilcoxon_pvalues

TestResult = tuple[np.ndarray, list[str], np.ndarray]
PairedTest = Callable[..., TestResult]



class PairedTestRegistry(Registry[PairedTest]):
    """Paired tests, each registered with every ability (abilities.check_abilities)."""

    def _check(self, decl: Declaration) -> None:
        check_abilities(decl)


TESTS = PairedTestRegistry("statistical test", config_field="stats.test")


def abilities(test: str) -> Abilities:
    """The declared abilities of the test named `test` (unknown: InputError)."""
    return abilities_of(TESTS.declaration(test))


def reported_abilities(test: str) -> Abilities:
    """What a report may say of the test a sweep used: its abilities, or for a test not
    registered here (a plugin's, in `ablate report` of its sweep without the plugin)
    abilities that claim nothing: no floor, no interval of its own, its assumption left
    to its plugin."""
    if test in TESTS:
        return abilities(test)
    return Abilities(inverts=None, smallest_p=None, self_test_p="own", power="t",
                     assumption=f"what the {test} test assumes is declared by its plugin, "
                                "which is not loaded here",
                     symmetric=False, also_called="", wilcoxon_column=False)


@TESTS.register("permutation", inverts="signflip", smallest_p=SIGNFLIP_SMALLEST_P,
                self_test_p="signflip-mc", power="t", assumption=SIGNFLIP_ASSUMPTION,
                symmetric=True, also_called="sign-flip", wilcoxon_column=False)
def permutation(S: np.ndarray, N: np.ndarray, *, resamples: int, seed: int, alpha: float) -> TestResult:
    """Two-sided sign-flip randomisation test over cluster sums: exact when feasible
    (a grid of values, or few clusters), else Monte Carlo."""
    p, method = signflip_pvalues(S, resamples=resamples, seed=seed)
    used = np.where(np.array(method) == "monte-carlo", resamples, 0).astype(np.int64)
    return p, list(method), used


@TESTS.register("t", inverts="t", smallest_p=None, self_test_p="cr2", power="own",
                assumption="the cluster-robust t (CR2, Bell-McCaffrey df) assumes the mean of "
                           "the cluster sums is close to normal",
                symmetric=False, also_called="", wilcoxon_column=False)
def t(S: np.ndarray, N: np.ndarray, *, resamples: int, seed: int, alpha: float) -> TestResult:
    """Cluster-robust t test (CR1 standard error, G - 1 degrees of freedom); the paired t
    test when every question is its own cluster."""
    p = cluster_ttest(S, N, alpha)[1].copy()
    return p, ["t"] * p.size, np.zeros(p.size, dtype=np.int64)


@TESTS.register("wilcoxon", inverts=None, smallest_p=None, self_test_p="own", power="t",
                assumption=SIGNFLIP_ASSUMPTION, symmetric=True, also_called="",
                wilcoxon_column=True)
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
