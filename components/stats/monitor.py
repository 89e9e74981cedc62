"""Anytime-valid monitoring of a key metric over a series of runs (nightly sweeps): the
drop rule "the metric has fallen below the reference by more than a margin", whose
false-alarm probability stays at most alpha however many runs are looked at and whenever
one stops looking (docs/statistics.md#alerts-over-many-runs).

What a run gives the rule: its key metric's mean x_t and the cluster-robust standard error
s_t of that mean (RunPoint). Per run, the shortfall in standard errors is
z_t = (reference - margin - x_t) / s_t. The null hypothesis is that no run has dropped:
every run's estimate is (approximately, by the central limit theorem over clusters)
normal with a mean at least reference - margin and a standard deviation at most s_t, so
z_t has a mean <= 0 and variance proxy 1. Two e-processes test it (an e-process: a
non-negative process whose value at any stopping time has expectation <= 1 under the
null; Ramdas, Grünwald, Vovk & Shafer 2023, "Game-theoretic statistics and safe
anytime-valid inference", Statistical Science 38(4)). They differ in what they assume
about how the runs' errors depend on each other:

- `fresh` (runs whose errors are conditionally independent given the past: each run
  draws its own questions, or the errors are the runs' own noise): for every
  lambda >= 0, exp(lambda z_t - lambda^2 / 2) has expectation <= 1 under the null, so
  the product over runs of 1 - k + k exp(lambda z_t - lambda^2 / 2) (a bettor staking
  the share k = KEEP of its wealth on each run and keeping the rest, as in the betting
  view of Waudby-Smith & Ramdas 2024 and Shafer's test martingales: a stable stretch
  before a drop costs at most a factor 1 / (1 - k) per run) is a non-negative
  supermartingale; so is a uniform mixture over a grid of lambdas (the discrete mixture
  method of Howard, Ramdas, McAuliffe & Sekhon 2021, "Time-uniform, nonparametric,
  nonasymptotic confidence sequences", Annals of Statistics 49(2)). By Ville's inequality (1939) it exceeds 1/alpha at any time with
  probability at most alpha. Evidence adds up over runs: a drop of one standard error
  per run is found in a few tens of runs.
- `shared` (any dependence between runs, e.g. nightly runs over mostly the same
  questions, whose question-sampling error is the same every night and does not average
  out): each run's own e-value e_t (a mixture of exp(lambda z_t - lambda^2 / 2) over
  larger lambdas) has expectation <= 1 under the null whatever the other runs did, so
  the weighted sum A_t = sum_{s <= t} e_s / (s (s + 1)) (weights summing to 1) is a
  non-decreasing process whose limit is an e-value (a weighted average of e-values is
  one under arbitrary dependence: Vovk & Wang 2021, "E-values: calibration, combination
  and applications", Annals of Statistics 49(3)); by Markov's inequality it ever exceeds
  1/alpha with probability at most alpha. It needs each alarm to rest mostly on a few
  runs' own evidence (a drop of 4 to 5 standard errors past the margin), because
  repeated looks at the same questions are not new evidence.

Betting confidence sequences for a bounded mean over the questions themselves
(Waudby-Smith & Ramdas 2024, JRSS-B 86(1)) are not used: they need the per-question
observations to be conditionally independent, and the runs of a series are not (their
questions overlap); a run records its mean and standard error, which is what these rules
read. Both rules treat s_t as the true standard deviation of the run's estimate: with few
clusters it is itself noisy and the guarantee approximate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

# fresh: lambdas for a per-run shortfall of ~0.1 to 3 standard errors (the best lambda for
# a shortfall d sustained over runs is d)
FRESH_LAMBDAS = np.geomspace(0.1, 3.0, 12)
# fresh: the share of the "wealth" bet on each run (the rest kept): a stable stretch
# before a drop (z_t < 0) then costs at most a factor 1 / (1 - KEEP) per run
KEEP = 0.5
# shared: lambdas for one run's shortfall of ~2.5 to 6 standard errors
SHARED_LAMBDAS = np.linspace(2.5, 6.0, 8)


@dataclass(frozen=True)
class RunPoint:
    """One run's key metric: its mean, the cluster-robust standard error of the mean, and
    the upper bound of the interval the run recorded (None: mean + z * se)."""

    mean: float
    se: float
    upper: float | None = None


def drop_z(points: Sequence[RunPoint], reference: float, margin: float) -> np.ndarray:
    """Per run, (reference - margin - mean) / se: the shortfall below the reference less
    the margin, in standard errors (> 0: below). ValueError on a non-finite mean or a
    standard error that is not positive."""
    for i, p in enumerate(points):
        if not (math.isfinite(p.mean) and math.isfinite(reference) and math.isfinite(margin)):
            raise ValueError(f"run {i}: the mean, reference and margin must be finite")
        if not (math.isfinite(p.se) and p.se > 0):
            raise ValueError(f"run {i}: the standard error must be positive (got {p.se})")
    means = np.array([p.mean for p in points], dtype=float)
    ses = np.array([p.se for p in points], dtype=float)
    return (reference - margin - means) / ses


def _log_mix(lam: np.ndarray, s: np.ndarray, v: np.ndarray) -> np.ndarray:
    """log of the uniform mixture over `lam` of exp(lam s - lam^2 v / 2), per element of
    s and v (computed in logs: no overflow)."""
    a = np.outer(s, lam) - np.outer(v, lam ** 2) / 2.0
    top = a.max(axis=1)
    return top + np.log(np.exp(a - top[:, None]).mean(axis=1))


def eprocess_fresh(z: Sequence[float] | np.ndarray) -> np.ndarray:
    """log M_t after each run, M_t the mixture over FRESH_LAMBDAS of
    prod_{s <= t} (1 - KEEP + KEEP exp(lambda z_s - lambda^2 / 2)): a test
    supermartingale when the runs' errors are conditionally independent (module
    docstring)."""
    z = np.asarray(z, dtype=float)
    if z.size == 0:
        return z.copy()
    a = np.outer(z, FRESH_LAMBDAS) - FRESH_LAMBDAS ** 2 / 2.0   # runs x lambdas
    log_factor = np.logaddexp(math.log(1.0 - KEEP), math.log(KEEP) + a)
    logs = np.cumsum(log_factor, axis=0)
    top = logs.max(axis=1)
    return top + np.log(np.exp(logs - top[:, None]).mean(axis=1))


def eprocess_shared(z: Sequence[float] | np.ndarray) -> np.ndarray:
    """log A_t after each run, A_t = sum_{s <= t} e_s / (s (s + 1)) with e_s the run's
    own e-value (mixture over SHARED_LAMBDAS): valid under any dependence between runs
    (module docstring)."""
    z = np.asarray(z, dtype=float)
    if z.size == 0:
        return z.copy()
    t = np.arange(1, z.size + 1, dtype=float)
    log_w_e = _log_mix(SHARED_LAMBDAS, z, np.ones_like(z)) - np.log(t * (t + 1.0))
    return np.logaddexp.accumulate(log_w_e)


def first_alarm(log_process: np.ndarray, alpha: float) -> int | None:
    """The index of the first run at which the e-process (its log) reaches 1/alpha, or
    None."""
    hit = np.flatnonzero(np.asarray(log_process) >= math.log(1.0 / alpha))
    return int(hit[0]) if hit.size else None


def naive_z(alpha: float) -> float:
    """The one-sided normal quantile z_{1-alpha} of the per-run test (no anytime
    guarantee: with n looks its false-alarm probability grows toward 1 - (1-alpha)^n)."""
    from statistics import NormalDist
    return NormalDist().inv_cdf(1.0 - alpha)
