"""The sweep's self-test: how its tests behave on nulls resampled from its own data.

No model compute. From the per-question differences of a few real comparisons (up to
MAX_COMPARISONS key comparisons, those whose changes sit in the most clusters), nulls are
drawn by a studentized cluster bootstrap of the centred cluster sums that keeps the
sweep's cluster sizes (ablate.components.stats.self_test_nulls): unlike a null made by
flipping signs, which is the sign-flip test's own randomisation distribution (on it that
test holds its level on any data), these nulls carry the sweep's skew and its dominant
documents, so a test that is liberal on data like these is liberal on them too. Each
family is run on the nulls:

- the configured test (`stats.test`), its p as it declares (`self_test_p`,
  ablate.components.stats.abilities): the sign-flip test by Monte Carlo, with fewer nulls,
  down to MIN_NULLS per comparison, where many clusters would make it slow;
- the cluster-robust t (CR2, Bell-McCaffrey df), which the MDE, `ablate power`, the
  sequential looks and the gate margin read (run once where it is the configured test).

The empirical type-I error is the share of nulls a family rejects at alpha (one
comparison at a time, no correction), with its Monte Carlo error; `off_level` follows
the rule of self_test_nulls (well above alpha, not one draw near it). An interval that
inverts its test (the default inversion interval; the t interval of the t) covers
exactly when the test does not reject a shifted null, so its coverage is 1 - type-I and
is not printed as a separate figure (nor is that of an interval that does not invert its
test: the t interval of the sign-flip test, the sign-flip inversion of a test that
declares none: `coverage_note` says it was not simulated); the cluster bootstrap
intervals (`bca`, `percentile`) get their own coverage on shifted nulls. With fewer than
MIN_CHANGED_TO_TELL changed clusters in every key comparison the record says it cannot
tell (`cannot_tell`) and gives no figures. One seed drives the draws, so the same data
give the same figures.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

import numpy as np
import polars as pl

from ablate.components.stats.bootstrap import bootstrap_ci
from ablate.components.stats.clusters import changed_clusters, cluster_sums
from ablate.components.stats.compare import pair_matrices
from ablate.components.stats.paired_tests import TESTS, abilities
from ablate.components.stats.self_test_nulls import (
    MIN_CHANGED_TO_TELL,
    OFF_LEVEL_FACTOR,
    bootstrap_nulls,
    cr2_p,
    null_rates,
    off_level,
    rate,
)
from ablate.components.stats.signflip import montecarlo_pvalues
from ablate.components.stats.table_prep import prepare_wide

NULL_REPLICATES = 1000      # type-I: per chosen comparison (cheap: p-values only)
COVERAGE_REPLICATES = 50    # coverage of a bootstrap interval (a bootstrap each)
MAX_COMPARISONS = 6
SELF_TEST_RESAMPLES = 500   # Monte Carlo sign flips of each null's own test
NULL_WORK = 10**9           # sign-flip work cap (clusters x nulls x flips): fewer nulls ...
MIN_NULLS = 200             # ... down to this many per comparison with many clusters
COVERAGE_BOOTSTRAP = 1000   # cluster bootstrap resamples of each shifted null's interval
INVERTS_NOTE = "inverts the test: 1 - type-I"


def _chosen(D: np.ndarray, M: np.ndarray, codes: np.ndarray, limit: int) -> np.ndarray:
    """The comparisons to simulate: at least 2 clusters with a change and 2 used clusters,
    the most changed clusters first (ties: column order)."""
    k = changed_clusters(D, M, codes)
    _, N = cluster_sums(D, M, codes)
    ok = np.flatnonzero((k >= 2) & ((N > 0).sum(axis=0) >= 2))
    order = ok[np.lexsort((ok, -k[ok]))]
    return order[:limit]


def _family(name: str, interval: str, r: tuple[float, float, int], alpha: float,
            coverage: tuple[float, float, int] | None, inverts: bool = True) -> dict[str, Any]:
    t1, se, nulls = r
    out = {"family": name, "interval": interval, "type_i": round(t1, 4),
           "type_i_mc_se": round(se, 4), "nulls": nulls, "off_level": off_level(t1, se, alpha)}
    if coverage is None:
        note = (INVERTS_NOTE if inverts
                else "not simulated: the interval does not invert the test")
        return out | {"coverage": None, "coverage_note": note}
    return out | {"coverage": round(coverage[0], 4), "coverage_mc_se": round(coverage[1], 4),
                  "alternatives": coverage[2]}


def _bootstrap_coverage(S: np.ndarray, N: np.ndarray, *, method: str, alpha: float,
                        reps: int, seed: int, rng: np.random.Generator
                        ) -> tuple[float, float, int]:
    """Coverage of the cluster bootstrap interval on nulls shifted by each comparison's
    observed mean: each cluster's shifted null sum spread evenly over its questions."""
    hits = []
    for j in range(S.shape[1]):
        theta = S[:, j].sum() / N[:, j].sum()
        Sn = bootstrap_nulls(S[:, j], N[:, j], reps, rng)
        used = N[:, j] > 0
        counts = N[used, j].astype(np.int64)
        codes = np.repeat(np.arange(counts.size), counts)
        D = (Sn[used] / N[used, j][:, None])[codes] + theta
        lo, hi, _, _ = bootstrap_ci(D, np.ones_like(D, dtype=bool), clusters=codes,
                                    alpha=alpha, resamples=COVERAGE_BOOTSTRAP, seed=seed,
                                    method=method)
        hits.append((np.isnan(lo) | (lo <= theta)) & (np.isnan(hi) | (theta <= hi)))
    return (*rate(np.concatenate(hits)), int(sum(h.size for h in hits)))


def self_test(table: pl.DataFrame, *, baseline: str, metrics: Sequence[str], test: str,
              ci_method: str, alpha: float, bootstrap_resamples: int, seed: int,
              cluster_col: str | None, max_comparisons: int = MAX_COMPARISONS,
              null_replicates: int = NULL_REPLICATES,
              coverage_replicates: int = COVERAGE_REPLICATES) -> dict[str, Any]:
    """The manifest's `self_test` record (module docstring): the comparisons simulated,
    and per family its type-I error on this data with its Monte Carlo error (and the
    coverage of a bootstrap interval), or `cannot_tell` with the reason."""
    started = time.perf_counter()
    w = prepare_wide(table, metrics=metrics, cluster_col=cluster_col)
    record: dict[str, Any] = {"alpha": alpha, "nulls_from": "studentized cluster bootstrap",
                              "comparisons": [], "families": [],
                              "null_replicates": null_replicates,
                              "off_level_above": round(OFF_LEVEL_FACTOR * alpha, 4),
                              "seed": seed}

    def done(**extra: Any) -> dict[str, Any]:
        return record | extra | {"seconds": round(time.perf_counter() - started, 3)}

    if baseline not in w.variants:
        return done()
    b = w.variants.index(baseline)
    pairs = [(m, v) for m in range(len(w.metrics)) for v in range(len(w.variants)) if v != b]
    if not pairs:
        return done()
    D, M, _ = pair_matrices(w, b, pairs)
    codes = w.clusters if cluster_col is not None else np.arange(D.shape[0], dtype=np.int64)
    cols = _chosen(D, M, codes, max_comparisons)
    if cols.size == 0:
        return done()
    k = changed_clusters(D[:, cols], M[:, cols], codes)
    if int(k.max()) < MIN_CHANGED_TO_TELL:
        return done(cannot_tell=f"the most changed key comparison has changes in {int(k.max())} "
                                f"clusters, fewer than {MIN_CHANGED_TO_TELL}: too few to "
                                "resample")
    cols = cols[k >= MIN_CHANGED_TO_TELL]
    record["comparisons"] = [f"{w.variants[pairs[j][1]]} on {w.metrics[pairs[j][0]]}"
                             for j in cols]
    S, N = cluster_sums(D[:, cols], M[:, cols], codes)
    rng = np.random.default_rng([seed, 56])

    able = abilities(test)

    def configured(Sx: np.ndarray, Nx: np.ndarray) -> np.ndarray:
        if able.self_test_p == "signflip-mc":
            return montecarlo_pvalues(Sx, SELF_TEST_RESAMPLES, seed)
        if able.self_test_p == "cr2":
            return cr2_p(Sx, Nx)
        return TESTS.get(test)(Sx, Nx, resamples=SELF_TEST_RESAMPLES, seed=seed, alpha=alpha)[0]

    is_t = able.self_test_p == "cr2"  # then it is the t family itself
    tests = {test: configured} | ({} if is_t else {"t": cr2_p})
    if able.self_test_p == "signflip-mc":  # the Monte Carlo p of every null: cap the work
        work = S.shape[0] * cols.size * SELF_TEST_RESAMPLES
        null_replicates = int(np.clip(NULL_WORK // work, min(MIN_NULLS, null_replicates),
                                      null_replicates))
        record["null_replicates"] = null_replicates
    rates = null_rates(S, N, tests, alpha=alpha, reps=null_replicates, rng=rng)
    coverage = None
    if ci_method in ("bca", "percentile"):
        coverage = _bootstrap_coverage(S, N, method=ci_method, alpha=alpha,
                                       reps=coverage_replicates, seed=seed, rng=rng)
    interval = {"inversion": able.inversion, "t": "t (CR2)"}.get(ci_method,
                                                                  f"cluster-{ci_method}")
    record["families"] = [_family(test, interval, rates[test], alpha,
                                  coverage if ci_method in ("bca", "percentile") else None,
                                  able.interval_inverts_test(ci_method))]
    if not is_t:
        record["families"].append(_family("t", "t (CR2)", rates["t"], alpha, None))
    return done()
