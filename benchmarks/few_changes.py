"""Coverage of the intervals on 0/1 metrics when the changes sit in a few documents,
tabulated by k, the number of documents with any change (issue 38, item 2).

The data-generating process (DGP): G documents x m questions; a 0/1 metric under the
baseline and the variant. Each document is *active* with probability pi (a cluster-level
propensity: most documents never change, a few change often); in an active document a
question changes with probability r, and a change is a loss with probability 0.7 (a win
with 0.3). The true population mean difference is therefore

    delta = pi * r * (0.3 - 0.7)        (exact: the expectation over the DGP),

nonzero, while a study that happens to draw few active documents sees few changes and
cannot reveal it. Each cell (one pi) draws R studies and analyses them as a sweep does
(compare_variants with the cluster column: the default sign-flip test with its inversion
interval, and `--test t`: the CR2 t with Bell-McCaffrey df), then tabulates the coverage
of delta by the realised k. `tango` is the product's interval for 0/1 columns with
k < FEW_CHANGED: the inversion interval widened to the two-sided cluster-aware Tango
score interval (ablate.components.stats.binary_bound), which accounts for changes not
seen.

    python benchmarks/few_changes.py [--reps 2000] [--seed 0] [--markdown]

stat_validity.py prints these rows in its table (`validity_rows`).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import polars as pl

from ablate.components.stats import compare_variants

ALPHA = 0.05
G, M = 50, 20             # the audit's 50 documents x 20 questions
RATE, P_LOSS = 0.25, 0.7  # change rate in an active document; share of changes that are losses
PIS = (0.02, 0.05, 0.1, 0.2, 0.4)  # expected k = G * pi (1 - (1 - r)^m) ~ 1, 2.5, 5, 10, 20
# (test, widened): the product (sign-flip and CR2 t, widened by Tango where k < FEW_CHANGED)
# beside the inversion interval alone (what ablate did before)
METHODS = (("permutation", True), ("t", True), ("permutation", False), ("t", False))
K_BINS = ((0, 0), (1, 1), (2, 2), (3, 4), (5, 6), (7, 9), (10, 14), (15, 19), (20, 50))


def true_delta(pi: float) -> float:
    return pi * RATE * ((1 - P_LOSS) - P_LOSS)


def draw(rng: np.random.Generator, pi: float, reps: int) -> np.ndarray:
    """reps x (G * M) paired differences (-1, 0, +1) of the DGP."""
    active = rng.random((reps, G)) < pi
    change = np.repeat(active, M, axis=1) & (rng.random((reps, G * M)) < RATE)
    loss = rng.random((reps, G * M)) < P_LOSS
    return np.where(change, np.where(loss, -1.0, 1.0), 0.0)


def _table(diffs: np.ndarray) -> pl.DataFrame:
    reps, n = diffs.shape
    return pl.DataFrame({
        "variant": np.repeat(np.array(["baseline"] + [f"v{r:05d}" for r in range(reps)]), n),
        "qid": np.tile(np.arange(n), reps + 1),
        "cluster": np.tile(np.repeat(np.arange(G), M).astype(str), reps + 1),
        "m": np.concatenate([np.zeros(n), diffs.ravel()])})


def _unwidened(lo, hi, D, M, S, N, level, k, few, significant):
    return lo, hi, np.zeros(lo.size, dtype=bool), np.zeros(lo.size, dtype=bool)


def analyse(diffs: np.ndarray, test: str, resamples: int, seed: int, widen: bool = True
            ) -> pl.DataFrame:
    """The product's analysis; widen=False: as before issue 38's widening (the test's
    inversion interval alone; the product's widening step replaced for this call)."""
    from ablate.components.stats import inference
    real = inference.widen_few_changed
    if not widen:
        inference.widen_few_changed = _unwidened  # type: ignore[assignment]
    try:
        return _compare(diffs, test, resamples, seed)
    finally:
        inference.widen_few_changed = real


def _compare(diffs: np.ndarray, test: str, resamples: int, seed: int) -> pl.DataFrame:
    return compare_variants(_table(diffs), baseline="baseline", metrics=["m"], test=test,
                            correction="none", alpha=ALPHA, resamples=resamples,
                            cluster_col="cluster", seed=seed)


def validity_rows(reps: int, seed: int, quick: bool = False, resamples: int = 999
                  ) -> list[dict]:
    """Coverage of the true delta by realised k, per test, pooled over the PIS cells
    (each cell's own delta), plus one row per cell."""
    rows: list[dict] = []
    pooled: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    for pi in (PIS[:3] if quick else PIS):
        rng = np.random.default_rng([seed, int(pi * 1000)])
        delta = true_delta(pi)
        diffs = draw(rng, pi, reps)
        for test, widen in METHODS:
            t0 = time.perf_counter()
            out = analyse(diffs, test, resamples, seed, widen)
            label = f"{test}{'' if widen else ' (inversion alone)'}"
            lo = out["ci_low"].fill_nan(-math.inf).to_numpy()
            hi = out["ci_high"].fill_nan(math.inf).to_numpy()
            k = out["n_changed_clusters"].to_numpy()
            cov = (lo <= delta) & (hi >= delta)
            pooled.setdefault(label, []).append((k, cov))
            rows.append({"cell": f"pi {pi}, E k {G * pi * (1 - (1 - RATE) ** M):.1f}",
                         "test": label, "delta": delta, "k": "all", "reps": int(k.size),
                         "coverage": float(cov.mean()),
                         "seconds": round(time.perf_counter() - t0, 1)})
    for test, parts in pooled.items():
        k = np.concatenate([p[0] for p in parts])
        cov = np.concatenate([p[1] for p in parts])
        for a, b in K_BINS:
            sel = (k >= a) & (k <= b)
            if sel.sum():
                rows.append({"cell": "pooled", "test": test, "delta": math.nan,
                             "k": f"{a}" if a == b else f"{a}-{b}", "reps": int(sel.sum()),
                             "coverage": float(cov[sel].mean()), "seconds": 0.0})
    return rows


def main() -> None:
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks.stat_validity import print_table
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--resamples", type=int, default=999)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    print(f"# few_changes: alpha {ALPHA}, {G} docs x {M} questions, {args.reps} studies per "
          f"cell, {args.resamples} resamples, seed {args.seed}")
    print_table("Coverage of the true mean difference by k (clusters with any change)",
                validity_rows(args.reps, args.seed, args.quick, args.resamples), args.markdown)


if __name__ == "__main__":
    main()
