"""The self-test's nulls and its rule (ablate.components.stats.self_test), on arrays.

Nulls that do not share the tested test's symmetry: a **studentized cluster bootstrap**
of one comparison's centred cluster sums that keeps the sweep's cluster sizes. Per
cluster g of one comparison (S_g its summed differences, N_g its used questions, n the
total, theta = sum S / n):

1. the residual r_g = S_g - theta N_g, scaled by 1 / sqrt(1 - N_g / n) (CR2: a large
   cluster pulls theta toward itself, so its raw residual is too small);
2. its scale sd_g = sqrt(tau N_g^2 + sigma N_g), tau and sigma >= 0 fitted by least
   squares to the squared scaled residuals (between-cluster and within-cluster variance);
3. z_g = scaled r_g / sd_g, centred on the used clusters' mean.

A null draws, for every used cluster g, one z of the used clusters at random (with
replacement) and sets S*_g = sd_g z, N*_g = N_g. The null mean is 0, the cluster sizes
(a document holding 40 % of the questions stays one document holding 40 %) and the
spread are this sweep's, and the cluster effects' shape is too: skewed clusters give
skewed nulls, a sweep where one big cluster carries the mean gives nulls that often lack
it. So a test that is liberal on data like these (the sign-flip test under skewed cluster
effects, the CR1 t with a dominant document) rejects more than alpha on the nulls too,
which a null made by flipping signs (the sign-flip test's own randomisation distribution,
the self-test before issue 56) could never show.

The rule (`off_level`): the empirical type-I over every null of the chosen comparisons
is above OFF_LEVEL_FACTOR * alpha and its lower 99 % Monte Carlo bound above alpha. The
margin is not only the Monte Carlo error: a valid test's rate on one sweep's nulls spreads
with the data (0.035-0.078 at alpha 0.05 over valid sweeps of 16 documents), so a flag
needs a rate no valid sweep gives often. benchmarks/self_test_validity.py measures how
often it flags valid and liberal tests.
"""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np

from ablate.components.stats.clusters import cluster_ttest

OFF_LEVEL_FACTOR = 1.6    # flag above 1.6 alpha (0.08 at alpha 0.05) ...
OFF_LEVEL_Z = 2.326       # ... with its one-sided 99 % Monte Carlo bound above alpha
MIN_CHANGED_TO_TELL = 8   # fewer changed clusters: too few to resample; cannot tell

PTest = Callable[[np.ndarray, np.ndarray], np.ndarray]  # (S, N) -> p per column


def null_scales(S: np.ndarray, N: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sd, z, used) of one comparison (S, N: clusters): the module docstring's steps 1-3;
    z is 0 outside the used clusters."""
    used = N > 0
    n = N.sum()
    theta = S.sum() / n
    with np.errstate(invalid="ignore", divide="ignore"):
        lev = np.where(used, N / n, 0.0)
        a = np.where(used & (lev < 1), (S - theta * N) / np.sqrt(1.0 - lev), 0.0)
    X = np.column_stack([N[used] ** 2, N[used]])
    coef = np.maximum(np.linalg.lstsq(X, a[used] ** 2, rcond=None)[0], 0.0)
    if not np.any(coef > 0):
        coef = np.array([0.0, float((a[used] ** 2).sum() / N[used].sum())])
    sd = np.sqrt(np.where(used, N**2 * coef[0] + N * coef[1], 0.0))
    z = np.zeros_like(S)
    ok = used & (sd > 0)
    z[ok] = a[ok] / sd[ok]
    z[used] -= z[used].mean()
    return sd, z, used


def bootstrap_nulls(S: np.ndarray, N: np.ndarray, reps: int, rng: np.random.Generator
                    ) -> np.ndarray:
    """clusters x reps null cluster sums of one comparison (module docstring); the
    counts stay N."""
    sd, z, used = null_scales(S, N)
    pool = z[used]
    out = np.zeros((S.size, reps))
    idx = rng.integers(0, pool.size, size=(int(used.sum()), reps))
    out[used] = sd[used][:, None] * pool[idx]
    return out


def off_level(rate: float, se: float, alpha: float) -> bool:
    """The module docstring's rule."""
    return bool(rate > OFF_LEVEL_FACTOR * alpha and rate - OFF_LEVEL_Z * se > alpha)


def rate(hits: np.ndarray) -> tuple[float, float]:
    """(share, its binomial Monte Carlo standard error)."""
    n = hits.size
    p = float(hits.mean()) if n else float("nan")
    return p, float(np.sqrt(p * (1.0 - p) / n)) if n else float("nan")


def cr2_p(S: np.ndarray, N: np.ndarray) -> np.ndarray:
    """The cluster-robust t's p (CR2, Bell-McCaffrey df)."""
    return cluster_ttest(S, N, 0.05)[1]


def null_rates(S: np.ndarray, N: np.ndarray, tests: Mapping[str, PTest], *, alpha: float,
               reps: int, rng: np.random.Generator) -> dict[str, tuple[float, float, int]]:
    """Per test: (type-I, its Monte Carlo SE, nulls) over `reps` nulls of every column of
    (S, N) (clusters x comparisons), the columns' nulls pooled."""
    Sn, Nn = [], []
    for j in range(S.shape[1]):
        Sn.append(bootstrap_nulls(S[:, j], N[:, j], reps, rng))
        Nn.append(np.repeat(N[:, j:j + 1], reps, axis=1))
    S0, N0 = np.hstack(Sn), np.hstack(Nn)
    out = {}
    for name, fn in tests.items():
        hits = np.nan_to_num(fn(S0, N0), nan=1.0) <= alpha
        r, se = rate(hits)
        out[name] = (r, se, int(hits.size))
    return out
