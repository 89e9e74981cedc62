"""Validity of the worth analysis (ablate.components.stats.worth_table) by simulation:
two-level factorial designs with known true Shapley values and interaction indices, on
clustered questions.

Each scenario is k factors with a true mean score mu(S) per cell. A question q of
cluster g scores, in cell S, y = b_q + mu(S) + sd * (u_g(S) + e_q(S)): b_q a question
difficulty shared by every cell (the pairing), u_g(S) a cluster effect per cell (so the
cells' contrasts are clustered: intraclass correlation `icc` of the per-cell noise) and
e_q(S) the question's own noise. Binary scenarios threshold a latent score of that form
(y = 1 when latent > 0), like a hit@k or an exact match; their true cell means are
exact normal probabilities. The true values are the Shapley values and interaction
indices of the true cell means (ablate.components.stats.worth).

Per scenario, R replicates give for the Shapley values (sv_*) and interaction indices
(ii_*):
- bias: the mean error of the estimates, averaged over the factors (pairs); max_bias the
  largest in absolute value;
- cover: the share of 95% intervals that hold the true value, over every factor (pair)
  and replicate (target 0.95), for the interval `--ci` (t: cluster-robust t with G - 1
  df, worth.parquet's default; bca: the cluster bootstrap);
- family_cover: the share of replicates in which all of the family's intervals at the
  Bonferroni level 1 - 0.05/m, the ones worth.parquet reports, hold their true values
  together (target at least 0.95);
- fwer: among the Shapley values (sv_) or interaction indices (ii_) that are truly 0,
  the share of replicates with at least one called significant by the Holm-corrected
  sign-flip test (target at most 0.05; blank when none is truly 0).
Then the permutation-sampling estimate of a 10-factor game against its exact values:
the error over seeds against the approximation error it reports.

    python -m benchmarks.worth_validity [--reps 500] [--ci t|bca] [--quick] [--markdown] [--seed 0]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from ablate.components.stats.bootstrap import bootstrap_ci
from ablate.components.stats.clusters import cluster_sums, cluster_ttest
from ablate.components.stats.worth import (
    all_cells,
    interaction_indices,
    permutation_plan,
    plan_cells,
    sampled_shapley,
    shapley_values,
)
from ablate.components.stats.worth_table import worth_contrasts, worth_inference

ALPHA = 0.05


@dataclass(frozen=True)
class Scenario:
    name: str
    k: int
    main: tuple[float, ...]          # each factor's additive effect
    pairs: tuple[tuple[int, int, float], ...]  # (i, j, extra when both on)
    clusters: int
    per: int
    icc: float
    sd: float = 0.3
    binary: bool = False


SCENARIOS = (
    Scenario("additive, 40 clusters x 10, ICC 0.3", 4, (0.10, 0.05, 0.0, -0.03), (), 40, 10, 0.3),
    Scenario("substitutes (A x B = -0.1), 40 x 10, ICC 0.3", 4, (0.10, 0.10, 0.0, 0.02),
             ((0, 1, -0.10),), 40, 10, 0.3),
    Scenario("substitutes, 20 clusters x 25, ICC 0.5", 4, (0.10, 0.10, 0.0, 0.02),
             ((0, 1, -0.10),), 20, 25, 0.5),
    Scenario("binary (hit), synergy C x D = +0.3 latent, 40 x 10", 4, (0.3, 0.3, 0.0, 0.0),
             ((2, 3, 0.3),), 40, 10, 0.3, sd=1.0, binary=True),
    Scenario("additive, 3 factors, 60 clusters x 5, ICC 0.3", 3, (0.05, 0.0, 0.02), (), 60, 5, 0.3),
)
QUICK = (1, 3)


def cell_means(sc: Scenario) -> tuple[list[tuple[int, ...]], np.ndarray]:
    cells = all_cells(sc.k)
    mu = np.array([sum(sc.main[i] * c[i] for i in range(sc.k))
                   + sum(x * c[i] * c[j] for i, j, x in sc.pairs) for c in cells])
    return cells, mu


B_MEAN, B_SD = 0.0, 0.5  # question difficulty (the latent intercept of binary scenarios)


def true_values(sc: Scenario) -> tuple[np.ndarray, np.ndarray]:
    cells, mu = cell_means(sc)
    if sc.binary:  # P(b + mu + sd (u + e) > 0), b ~ N(B_MEAN, B_SD^2), u + e ~ N(0, 1)
        mu = ndtr((B_MEAN + mu) / math.sqrt(B_SD ** 2 + sc.sd ** 2))
    return shapley_values(mu, cells), interaction_indices(mu, cells)


def draw(sc: Scenario, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(Y questions x cells, cluster codes)."""
    cells, mu = cell_means(sc)
    n = sc.clusters * sc.per
    codes = np.repeat(np.arange(sc.clusters), sc.per)
    b = rng.normal(B_MEAN, B_SD, n)
    u = rng.normal(0, math.sqrt(sc.icc), (sc.clusters, len(cells)))[codes]
    e = rng.normal(0, math.sqrt(1 - sc.icc), (n, len(cells)))
    y = b[:, None] + mu[None, :] + sc.sd * (u + e)
    return ((y > 0).astype(float) if sc.binary else y), codes


def scenario_row(sc: Scenario, reps: int, seed: int, resamples: int, ci: str = "t") -> dict:
    rng = np.random.default_rng([seed, SCENARIOS.index(sc)])
    cells = all_cells(sc.k)
    sv_true, ii_true = true_values(sc)
    truth = np.concatenate([sv_true, ii_true])
    k = sc.k
    err = np.zeros((reps, truth.size))
    cover = np.zeros((reps, truth.size), dtype=bool)
    fam = np.zeros((reps, 2), dtype=bool)
    null = np.abs(truth) < 1e-12
    false_call = np.zeros((reps, 2), dtype=bool)
    for r in range(reps):
        Y, codes = draw(sc, rng)
        res = worth_inference(Y, cells, codes, clustered=True, alpha=ALPHA, ci_method=ci,
                              resamples=resamples, bootstrap_resamples=resamples, seed=r)
        err[r] = res.value - truth
        inside = (res.ci_low <= truth) & (truth <= res.ci_high)
        fam[r] = inside[:k].all(), inside[k:].all()
        C, _ = worth_contrasts(Y, cells)
        M = np.ones_like(C, dtype=bool)
        if ci == "t":
            S, N = cluster_sums(C, M, codes)
            _, _, lo, hi = cluster_ttest(S, N, ALPHA)
        else:
            lo, hi, _, _ = bootstrap_ci(C, M, clusters=codes, alpha=ALPHA, resamples=resamples,
                                        seed=r, method=ci)
        cover[r] = (lo <= truth) & (truth <= hi)
        called = (np.nan_to_num(res.p_adjusted, nan=1.0) <= ALPHA) & null
        false_call[r] = called[:k].any(), called[k:].any()
    bias = err.mean(axis=0)
    row = {"scenario": sc.name, "ci": ci, "G": sc.clusters, "n": sc.clusters * sc.per}
    for tag, sl in (("sv", slice(0, k)), ("ii", slice(k, None))):
        row[f"{tag}_bias"] = float(bias[sl].mean())
        row[f"{tag}_max_bias"] = float(bias[sl][np.argmax(np.abs(bias[sl]))])
        row[f"{tag}_cover"] = float(cover[:, sl].mean())
        row[f"{tag}_family_cover"] = float(fam[:, 0 if tag == "sv" else 1].mean())
        j = 0 if tag == "sv" else 1
        row[f"{tag}_fwer"] = float(false_call[:, j].mean()) if null[sl].any() else ""
    return row


def sampling_rows(seed: int, seeds: int = 200) -> list[dict]:
    """A 10-factor game with pairwise and higher-order terms: the sampled estimate's error
    against the exact values, and the approximation error it reports."""
    rng = np.random.default_rng([seed, 0x10])
    k = 10
    beta = rng.normal(0, 0.1, k)
    gamma = np.triu(rng.normal(0, 0.1, (k, k)), 1)

    def v(cell: tuple[int, ...]) -> float:
        x = np.array(cell, dtype=float)
        return float(beta @ x + x @ gamma @ x + 0.3 * x[0] * x[1] * x[2]
                     + 0.2 * x[3] * x[4] * x[5] * x[6])
    exact = beta + 0.5 * (gamma.sum(axis=1) + gamma.sum(axis=0))
    exact[:3] += 0.1
    exact[3:7] += 0.05
    rows = []
    for n_orders in (20, 100, 400):
        errs, covered, cells_used, rep_se = [], [], [], []
        for s in range(seeds):
            orders = permutation_plan(k, n_orders, seed=s)
            cells = plan_cells(orders)
            est, se = sampled_shapley(orders, {c: v(c) for c in cells})
            e = np.abs(est - exact)[:7]   # factors 7-9 only have pairwise terms: exact
            errs.append(e)
            covered.append(e <= 1.96 * se[:7])
            cells_used.append(len(cells))
            rep_se.append(se[:7].mean())
        rows.append({"orders": n_orders, "cells_run": float(np.mean(cells_used)),
                     "of_cells": 2 ** k, "mean_reported_se": float(np.mean(rep_se)),
                     "rms_error": float(np.sqrt(np.mean(np.square(errs)))),
                     "cover_1.96se": float(np.mean(covered))})
    return rows


def main(argv: list[str] | None = None) -> dict[str, list[dict]]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ci", default="t", help="t (default), bca or percentile")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    if args.quick:
        args.reps = min(args.reps, 300)
    chosen = [SCENARIOS[i] for i in QUICK] if args.quick else SCENARIOS
    print(f"# worth_validity: alpha {ALPHA}, {args.reps} replicates per scenario, "
          f"{args.resamples} resamples, intervals {args.ci}, seed {args.seed}")
    from benchmarks.stat_validity import print_table  # the project root is on sys.path
    t0 = time.perf_counter()
    rows = []
    for i, sc in enumerate(chosen, 1):
        t = time.perf_counter()
        rows.append(scenario_row(sc, args.reps, args.seed, args.resamples, args.ci))
        print(f"[{i}/{len(chosen)}] {sc.name}: {time.perf_counter() - t:.1f} s", file=sys.stderr)
    print_table("Shapley values (sv) and interaction indices (ii): bias and coverage of the "
                "cluster intervals", rows, args.markdown)
    samp = sampling_rows(args.seed, 50 if args.quick else 200)
    print_table("Permutation sampling, 10 factors: error vs reported approximation error",
                samp, args.markdown)
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
    return {"scenarios": rows, "sampling": samp}


if __name__ == "__main__":
    main()
