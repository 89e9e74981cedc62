"""Familywise error of `report.slices` by simulation. Slices are a view (issue 54): the
main comparisons are corrected alone (their verdicts never depend on the slices asked for)
and the slice comparisons in a family of their key metric on their slice column
(ablate.components.stats.slices.slice_comparisons). Printed: the familywise error of the
main family, of the slice family (each at most alpha), and of the two together (the error
of a reader taking any verdict of either, at most 2 x alpha by Bonferroni); beside it, the
same null data with each slice value corrected as a family of its own (by hand), which
inflates the slice family's error.

Data: R null sweeps (no variant differs from the baseline), each with `variants` variants,
one metric, questions in `clusters` documents (ICC 0.3 on the paired difference), each
document's questions of one `type` drawn from `types` values; the statistics are the
sweep's own (permutation test, holm, clusters as the unit).

    python benchmarks/slice_fwer.py [--reps 400] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import polars as pl

from ablate.components.stats.compare import compare_joint
from ablate.components.stats.slices import joined, slice_comparisons, sliced_inputs, take

ALPHA = 0.05
KW = dict(test="permutation", correction="holm", alpha=ALPHA, resamples=1000,
          bootstrap_resamples=200, cluster_col="cluster")


def null_sweep(rng: np.random.Generator, variants: int, clusters: int, per: int,
               types: int) -> pl.DataFrame:
    rows = []
    kinds = rng.integers(0, types, size=clusters)
    for c in range(clusters):
        base = rng.normal(0.5, 0.2)
        shifts = rng.normal(0, 0.1 * np.sqrt(0.3), size=variants)  # cluster part of the null noise
        for j in range(per):
            qid = f"q{c}_{j}"
            b = base + rng.normal(0, 0.2)
            rows.append({"variant": "baseline", "qid": qid, "cluster": f"d{c}",
                         "type": f"t{kinds[c]}", "m/x": b})
            for v in range(variants):
                rows.append({"variant": f"v{v}", "qid": qid, "cluster": f"d{c}",
                             "type": f"t{kinds[c]}",
                             "m/x": b + shifts[v] + rng.normal(0, 0.1 * np.sqrt(0.7))})
    return pl.DataFrame(rows)


def one(pq: pl.DataFrame, seed: int) -> tuple[bool, bool, bool]:
    """(a false positive among the main comparisons, among the slice comparisons, among
    the slice comparisons with each slice value a family of its own)."""
    table, cols, untested = sliced_inputs(pq, slices=["type"], key=["m/x"], tested=["m/x"],
                                          baseline="baseline", alpha=ALPHA, cluster_col="cluster")
    stats, _, _ = compare_joint(table, baseline="baseline", metrics=["m/x"], seed=seed, **KW)
    rows = slice_comparisons(table, cols, baseline="baseline", family="per_metric", seed=seed,
                             **KW)
    main, sliced = take(joined(pl.concat([stats, rows], how="diagonal_relaxed"), cols, untested))
    # by hand: each slice value its own family
    apart_stats, _, _ = compare_joint(table, baseline="baseline",
                                      metrics=[c.column for c in cols], seed=seed, **KW)
    return (bool(main["significant"].any()),
            bool(sliced is not None and sliced["significant"].any()),
            bool(apart_stats["significant"].any()))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--variants", type=int, default=3)
    ap.add_argument("--clusters", type=int, default=24)
    ap.add_argument("--per", type=int, default=4)
    ap.add_argument("--types", type=int, default=2)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    t0 = time.perf_counter()
    main_fp = slice_fp = either = apart = 0
    for r in range(a.reps):
        m, sl, s = one(null_sweep(rng, a.variants, a.clusters, a.per, a.types), seed=r)
        main_fp += m
        slice_fp += sl
        either += m or sl
        apart += s
    se = np.sqrt(ALPHA * (1 - ALPHA) / a.reps)
    print(f"null sweeps: {a.reps}, {a.variants} variants, {a.clusters} clusters x {a.per} "
          f"questions, {a.types} slice values; alpha {ALPHA} (±{2 * se:.3f} at 2 SE)")
    print(f"FWER, main family (slices never in it):               {main_fp / a.reps:.3f}")
    print(f"FWER, slice family (key metric x slice column):       {slice_fp / a.reps:.3f}")
    print(f"FWER, main or slice (bound 2 x alpha):                {either / a.reps:.3f}")
    print(f"FWER, slices with each value a family of its own:     {apart / a.reps:.3f}")
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
