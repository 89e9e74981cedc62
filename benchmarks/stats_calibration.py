"""Error rate and coverage of the paired comparison (`compare_variants`) by simulation.

Null variants (true difference 0) and shifted variants (true difference 0.02) are
compared with a baseline on a continuous per-question metric, in two designs:
- independent: 200 questions, each its own cluster;
- clustered: 20 clusters (documents) x 10 questions, the intraclass correlation of the
  paired difference 0.5 (what questions sharing a document look like).
Each design is analysed as the sweep analyses it (no cluster column) and, for the
clustered one, with `cluster_col` too. Printed per design: the share of null comparisons
with p < 0.05 (sign-flip and t test; should be about 0.05), and the share of intervals
covering the true difference (should be about 0.95), over datasets x variants comparisons.

    python benchmarks/stats_calibration.py [--datasets 20] [--variants 20] [--resamples 2000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import polars as pl

try:
    from ablate.components.stats import compare_variants
except ImportError:  # an older checkout, before the package was installed as ablate.*
    from components.stats import compare_variants  # type: ignore[no-redef]

SCALE = 0.1  # sd of a paired difference


def dataset(rng: np.random.Generator, n_clusters: int, per_cluster: int, icc: float,
            n_variants: int, shift: float) -> pl.DataFrame:
    """Long table: baseline and `n_variants` variants, each variant's paired difference
    = shift + cluster effect (variance icc) + question noise (variance 1 - icc), x SCALE."""
    n = n_clusters * per_cluster
    cluster = np.repeat(np.arange(n_clusters), per_cluster)
    base = rng.normal(0.5, 0.2, n)
    rows = {"variant": ["baseline"] * n, "qid": [f"q{i}" for i in range(n)],
            "cluster": [f"c{c}" for c in cluster], "score": list(base)}
    for v in range(n_variants):
        effect = rng.normal(0, np.sqrt(icc), n_clusters)[cluster]
        noise = rng.normal(0, np.sqrt(1 - icc), n)
        score = base + shift + SCALE * (effect + noise)
        rows["variant"] += [f"v{v:02d}"] * n
        rows["qid"] += [f"q{i}" for i in range(n)]
        rows["cluster"] += [f"c{c}" for c in cluster]
        rows["score"] += list(score)
    return pl.DataFrame(rows)


def run(design: str, n_clusters: int, per_cluster: int, icc: float, cluster_col: str | None,
        args: argparse.Namespace) -> dict[str, float]:
    out: dict[str, list[float]] = {"p_signflip": [], "p_t": [], "cover_null": [],
                                   "cover_shift": []}
    for shift, cover in ((0.0, "cover_null"), (0.02, "cover_shift")):
        for d in range(args.datasets):
            rng = np.random.default_rng([d, int(shift * 1000), n_clusters])
            table = dataset(rng, n_clusters, per_cluster, icc, args.variants, shift)
            st = compare_variants(table, baseline="baseline", metrics=["score"],
                                  resamples=args.resamples, bootstrap_resamples=args.resamples,
                                  seed=d, cluster_col=cluster_col, correction="none")
            out[cover] += list(((st["ci_low"] <= shift) & (shift <= st["ci_high"])).cast(float))
            if shift == 0.0:
                out["p_signflip"] += list((st["p_value"] < 0.05).cast(float))
                out["p_t"] += list((st["p_ttest"] < 0.05).cast(float))
    return {k: float(np.mean(v)) for k, v in out.items()} | {"n": len(out["p_t"])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=20)
    ap.add_argument("--variants", type=int, default=20)
    ap.add_argument("--resamples", type=int, default=2000)
    args = ap.parse_args()
    designs = [("independent, analysed per question", 200, 1, 0.0, None),
               ("clustered ICC 0.5, analysed per question", 20, 10, 0.5, None),
               ("clustered ICC 0.5, cluster_col given", 20, 10, 0.5, "cluster")]
    print(f"{'design':44} {'n':>5} {'p<.05 signflip':>15} {'p<.05 t':>8} "
          f"{'CI covers 0':>12} {'CI covers +0.02':>16}")
    for name, k, m, icc, col in designs:
        t0 = time.perf_counter()
        r = run(name, k, m, icc, col, args)
        print(f"{name:44} {r['n']:5d} {r['p_signflip']:15.3f} {r['p_t']:8.3f} "
              f"{r['cover_null']:12.3f} {r['cover_shift']:16.3f}   ({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
