"""The sweep's self-test: how the tests and intervals behave on this sweep's own data.

No model compute: from the per-question differences of a few real comparisons (those
whose changes sit in the most clusters), each comparison's differences are centred on
their mean and flipped in sign a whole cluster at a time, which keeps the observed
cluster sizes, the spread between and within clusters and the ties, and makes the null
true. Each family is then run on these nulls, as the sweep runs it:

- the configured test (`stats.test`) and its interval (`stats.ci_method`), through the
  same `infer` the statistics use;
- the cluster-robust t (CR2, Bell-McCaffrey df), which the MDE, `ablate power`, the
  sequential looks and the gate margin read.

The empirical type-I error is the share of nulls the family rejects at alpha (one
comparison at a time, no correction), and the coverage the share of shifted alternatives
(the same nulls plus the comparison's observed mean difference) whose interval holds the
shift. Each figure comes with its Monte Carlo standard error; a family whose type-I error
is above alpha by more than two standard errors and 0.01 is `off_level`. One seed drives
the signs, so the same data give the same figures.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np
import polars as pl

from ablate.components.stats.clusters import changed_clusters, cluster_sums, cluster_ttest
from ablate.components.stats.compare import pair_matrices
from ablate.components.stats.inference import infer
from ablate.components.stats.inversion import inversion_interval
from ablate.components.stats.signflip import REL_TOL, montecarlo_pvalues
from ablate.components.stats.table_prep import prepare_wide

NULL_REPLICATES = 200       # type-I: per chosen comparison (cheap: p-values only)
COVERAGE_REPLICATES = 50    # coverage of the configured interval (an inversion each)
MAX_COMPARISONS = 6
SELF_TEST_RESAMPLES = 1000  # Monte Carlo sign flips of each null's own test
ENUM_MAX_NONZERO = 21       # exact sign-flip p of the nulls up to 2^20 patterns
OFF_LEVEL_SE = 2.0
OFF_LEVEL_MIN = 0.01


def _chosen(D: np.ndarray, M: np.ndarray, codes: np.ndarray, limit: int) -> np.ndarray:
    """The comparisons to simulate: at least 2 clusters with a change and 2 used clusters,
    the most changed clusters first (ties: column order)."""
    k = changed_clusters(D, M, codes)
    _, N = cluster_sums(D, M, codes)
    ok = np.flatnonzero((k >= 2) & ((N > 0).sum(axis=0) >= 2))
    order = ok[np.lexsort((ok, -k[ok]))]
    return order[:limit]


def _nulls(D: np.ndarray, M: np.ndarray, codes: np.ndarray, cols: np.ndarray, reps: int,
           rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(null differences, used mask, observed mean per replicate): questions x
    (len(cols) * reps), each comparison's centred differences with one random sign per
    cluster and replicate."""
    g = int(codes.max()) + 1 if codes.size else 0
    blocks, masks, shifts = [], [], []
    for j in cols:
        m = M[:, j]
        theta = float(D[m, j].mean())
        centred = np.where(m, D[:, j] - theta, 0.0)
        signs = rng.choice(np.array([-1.0, 1.0]), size=(g, reps))
        blocks.append(centred[:, None] * signs[codes])
        masks.append(np.repeat(m[:, None], reps, axis=1))
        shifts.append(np.full(reps, theta))
    return np.hstack(blocks), np.hstack(masks), np.concatenate(shifts)


def signflip_null_pvalues(S: np.ndarray, seed: int) -> np.ndarray:
    """The sign-flip test's p for every column of S (clusters x nulls) whose columns are
    one comparison's cluster sums under different sign patterns: they share |S|, so they
    share the test's null distribution, enumerated once (every pattern of the non-zero
    sums, the tie tolerance of ablate.components.stats.signflip) and read for each column
    by a binary search; the exact p that `signflip_pvalues` gives by enumeration. With more
    than ENUM_MAX_NONZERO non-zero clusters, its Monte Carlo p."""
    a = np.abs(S[:, 0])
    nz = a[a != 0]
    if nz.size == 0:
        return np.ones(S.shape[1])
    if nz.size > ENUM_MAX_NONZERO:
        return montecarlo_pvalues(S, SELF_TEST_RESAMPLES, seed)
    n = nz.size
    codes = np.arange(2 ** (n - 1), dtype=np.int64)[:, None]
    signs = ((codes >> np.arange(n - 1)) & 1) * 2.0 - 1.0
    ref = np.sort(np.abs(nz[0] + signs @ nz[1:]))
    observed = np.abs(S.sum(axis=0)) - (REL_TOL * float(nz.sum()) + 1e-300)
    return (ref.size - np.searchsorted(ref, observed, side="left")) / ref.size


def _rate(hits: np.ndarray) -> tuple[float, float]:
    n = hits.size
    p = float(hits.mean()) if n else float("nan")
    return p, float(np.sqrt(p * (1.0 - p) / n)) if n else float("nan")


def _covers(lo: np.ndarray, hi: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """An unbounded side (NaN) covers."""
    return (np.isnan(lo) | (lo <= truth)) & (np.isnan(hi) | (truth <= hi))


def _family(name: str, interval: str, p: np.ndarray, lo: np.ndarray, hi: np.ndarray,
            shift: np.ndarray, alpha: float) -> dict[str, Any]:
    t1, t1_se = _rate(np.nan_to_num(p, nan=1.0) <= alpha)
    cov, cov_se = _rate(_covers(lo, hi, shift))
    off = bool(t1 - alpha > max(OFF_LEVEL_SE * t1_se, OFF_LEVEL_MIN))
    return {"family": name, "interval": interval, "type_i": round(t1, 4),
            "type_i_mc_se": round(t1_se, 4), "nulls": int(p.size), "coverage": round(cov, 4),
            "coverage_mc_se": round(cov_se, 4), "alternatives": int(lo.size),
            "off_level": off}


def self_test(table: pl.DataFrame, *, baseline: str, metrics: Sequence[str], test: str,
              ci_method: str, alpha: float, bootstrap_resamples: int, seed: int,
              cluster_col: str | None, max_comparisons: int = MAX_COMPARISONS,
              null_replicates: int = NULL_REPLICATES,
              coverage_replicates: int = COVERAGE_REPLICATES) -> dict[str, Any]:
    """The manifest's `self_test` record (module docstring): the comparisons simulated,
    and per family its type-I error and coverage on this data with Monte Carlo errors."""
    started = time.perf_counter()
    w = prepare_wide(table, metrics=metrics, cluster_col=cluster_col)
    record: dict[str, Any] = {"alpha": alpha, "comparisons": [], "families": [],
                              "null_replicates": null_replicates,
                              "coverage_replicates": coverage_replicates, "seed": seed}
    if baseline not in w.variants:
        return record | {"seconds": round(time.perf_counter() - started, 3)}
    b = w.variants.index(baseline)
    pairs = [(m, v) for m in range(len(w.metrics)) for v in range(len(w.variants)) if v != b]
    if not pairs:
        return record | {"seconds": round(time.perf_counter() - started, 3)}
    D, M, _ = pair_matrices(w, b, pairs)
    codes = w.clusters if cluster_col is not None else np.arange(D.shape[0], dtype=np.int64)
    cols = _chosen(D, M, codes, max_comparisons)
    record["comparisons"] = [f"{w.variants[pairs[j][1]]} on {w.metrics[pairs[j][0]]}"
                             for j in cols]
    if cols.size == 0:
        return record | {"seconds": round(time.perf_counter() - started, 3)}
    rng = np.random.default_rng([seed, 38])
    Dn, Mn, shift = _nulls(D, M, codes, cols, null_replicates, rng)
    Dc, Mc, shift_c = _nulls(D, M, codes, cols, coverage_replicates, rng)
    Dc = np.where(Mc, Dc + shift_c[None, :], 0.0)
    clustered = cluster_col is not None

    def run(Dx: np.ndarray, Mx: np.ndarray, tst: str, ci: str):
        return infer(Dx, Mx, codes, np.arange(Dx.shape[1]), test=tst, correction="holm",
                     alpha=alpha, resamples=SELF_TEST_RESAMPLES,
                     bootstrap_resamples=bootstrap_resamples, ci_method=ci, seed=seed,
                     clustered=clustered)

    families = []
    S, N = cluster_sums(Dn, Mn, codes)
    Sc, Nc = cluster_sums(Dc, Mc, codes)
    level = np.full(Dc.shape[1], alpha)
    if test == "permutation":  # the default: exact p per comparison's block of nulls
        blocks = np.split(np.arange(Dn.shape[1]), cols.size)
        p_null = np.concatenate([signflip_null_pvalues(S[:, b], seed) for b in blocks])
    else:
        p_null = run(Dn, Mn, test, "t").p_value
    if test == "permutation" and ci_method == "inversion":
        lo, hi, _ = inversion_interval(Dc, Mc, Sc, Nc, level, None,
                                       resamples=SELF_TEST_RESAMPLES, seed=seed)
        interval = "signflip-inversion"
    else:
        cov = run(Dc, Mc, test, ci_method)
        lo, hi, interval = cov.ci_low, cov.ci_high, cov.ci_method[0]
    families.append(_family(test, interval, p_null, lo, hi, shift_c, alpha))
    if test != "t":
        p_t = cluster_ttest(S, N, alpha)[1]
        _, _, lo_t, hi_t = cluster_ttest(Sc, Nc, alpha)
        families.append(_family("t", "t (CR2)", p_t, lo_t, hi_t, shift_c, alpha))
    record["families"] = families
    return record | {"seconds": round(time.perf_counter() - started, 3)}
