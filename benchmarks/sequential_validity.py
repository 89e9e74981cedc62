"""Validity of sequential stopping by simulation: type-I error, power and the share of the
sample used, of the whole procedure of flows/run/sequential.py (looks every `batch`
questions of one random order, the cluster-robust t at the Lan-DeMets O'Brien-Fleming
boundaries' nominal levels, alpha split over the key comparisons, a variant stopping once
all its key comparisons are decided).

Designs: 320 questions, looks every 50 (50, 100, ..., 250, 320); independent questions, or
questions in 16 or 40 documents (clusters of 20 or 8) with an intraclass correlation (ICC)
of the paired difference of 0.1 or 0.5; one key comparison, or four (four metrics of one
variant, independent given the clusters, each at alpha / 4). R null studies give the
type-I error (the familywise one with four comparisons: any rejected) and R studies with
every true difference at `delta` (2.8 standard errors of the full-sample mean, ~80 % power
for one fixed-sample test) give the power (every comparison decided; with four: the share
of comparisons decided) and the mean share of the 320 questions used. `old z` is what the
code before issue 27 did on the null studies of one comparison: the question-level
z = mean / (sd / sqrt(n)) against the normal boundaries.

    python benchmarks/sequential_validity.py [--reps 3000] [--alpha 0.05] [--seed 27]

Target: type-I error <= alpha within 3 binomial standard errors.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from ablate.components.stats.sequential import (
    boundaries,
    cluster_t,
    look_sizes,
    t_boundary,
)

N, BATCH = 320, 50
DESIGNS = (("independent", N, 0.0), ("ICC 0.1, 16 clusters", 16, 0.1),
           ("ICC 0.1, 40 clusters", 40, 0.1), ("ICC 0.5, 16 clusters", 16, 0.5),
           ("ICC 0.5, 40 clusters", 40, 0.5))


def _se_full(clusters: int, icc: float) -> float:
    """Standard error of the mean of N differences (variance 1) in equal clusters."""
    return math.sqrt((1.0 + (N / clusters - 1.0) * icc) / N)


def _study(rng: np.random.Generator, clusters: int, icc: float, k: int, delta: float,
           alpha: float) -> tuple[bool, int, int, bool]:
    """One study: (any comparison decided, comparisons decided, questions used, the old
    question-level z of comparison 0 decided)."""
    codes = rng.permutation(np.repeat(np.arange(clusters), N // clusters))  # one random order
    d = (delta + rng.normal(0.0, math.sqrt(icc), (clusters, k))[codes]
         + rng.normal(0.0, math.sqrt(1.0 - icc), (N, k)))
    sizes = look_sizes(N, BATCH)
    bounds = boundaries(tuple(n / N for n in sizes), alpha / k)
    decided = np.zeros(k, dtype=bool)
    used = N
    for n, c in zip(sizes, bounds):
        for j in np.flatnonzero(~decided):
            t, df = cluster_t(d[:n, j], None if clusters == N else codes[:n])
            decided[j] = abs(t) >= t_boundary(c, df)
        if decided.all():
            used = n
            break
    old = False
    if k == 1:
        for n, c in zip(sizes, bounds):
            x = d[:n, 0]
            if abs(x.mean()) / (x.std(ddof=1) / math.sqrt(n)) >= c:
                old = True
                break
    return bool(decided.any()), int(decided.sum()), used, old


def validity_rows(reps: int, seed: int, quick: bool = False, alpha: float = 0.05) -> list[dict]:
    """One row per design x number of key comparisons (benchmarks/stat_validity.py prints
    them in its table): type-I error, power (share of comparisons decided under the
    effect) and the share of questions used under the effect and under none."""
    rng = np.random.default_rng(seed)
    rows = []
    for name, clusters, icc in (DESIGNS[:1] + DESIGNS[3:4] if quick else DESIGNS):
        delta = 2.8 * _se_full(clusters, icc)
        for k in ((1,) if quick else (1, 4)):
            null = [_study(rng, clusters, icc, k, 0.0, alpha) for _ in range(reps)]
            alt = [_study(rng, clusters, icc, k, delta, alpha) for _ in range(reps)]
            rows.append({"design": name, "key": k,
                         "type_I": float(np.mean([x[0] for x in null])),
                         "old_z_type_I": float(np.mean([x[3] for x in null])) if k == 1 else math.nan,
                         "power": float(np.mean([x[1] / k for x in alt])),
                         "used_H1": float(np.mean([x[2] for x in alt]) / N),
                         "used_H0": float(np.mean([x[2] for x in null]) / N)})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3000, help="studies per cell (default 3000: ~1.5 min)")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=27)
    a = ap.parse_args()
    tol = 3.0 * math.sqrt(a.alpha * (1 - a.alpha) / a.reps)
    start = time.time()
    print(f"sequential validity: N {N}, looks {look_sizes(N, BATCH)}, alpha {a.alpha}, "
          f"{a.reps} studies per cell, seed {a.seed}; target type-I <= alpha + {tol:.4f} (3 SE)")
    print(f"{'design':24} {'key':>3} {'type-I':>7} {'old z':>6} {'ok':>3} "
          f"{'power':>6} {'used|H1':>7} {'used|H0':>7}")
    for r in validity_rows(a.reps, a.seed, alpha=a.alpha):
        old = "-" if math.isnan(r["old_z_type_I"]) else f"{r['old_z_type_I']:.3f}"
        ok = "yes" if r["type_I"] <= a.alpha + tol else "NO"
        print(f"{r['design']:24} {r['key']:>3} {r['type_I']:7.3f} {old:>6} {ok:>3} "
              f"{r['power']:6.3f} {r['used_H1']:7.2f} {r['used_H0']:7.2f}", flush=True)
    print(f"({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
