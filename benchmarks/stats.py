"""Benchmark the statistics engine against a straightforward per-comparison loop.

Workload (the issue's target): 20 variants + baseline x 15 metrics x 1,000 questions,
10,000 sign-flip resamples and 10,000 bootstrap resamples (BCa). 10 metrics are
continuous retrieval-like scores undefined on the 1/3 unanswerable questions; 3 are
binary and 2 on a 0/0.5/1 grid (exact paths). The loop baseline draws its own sign and
bootstrap matrices for every comparison (the textbook version, no sharing); it runs on
a sample of comparisons and is scaled up to the full count.

    python benchmarks/stats.py [--questions 1000] [--variants 20] [--loop-sample 30]
                               [--continuous]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import polars as pl
from scipy.special import ndtr, ndtri

from ablate.components.stats import compare_variants


def make_table(n_q: int, n_var: int, seed: int = 0, continuous: bool = False
               ) -> tuple[pl.DataFrame, list[str]]:
    rng = np.random.default_rng(seed)
    unanswerable = rng.random(n_q) < 1 / 3
    difficulty = rng.random(n_q)
    cols: dict[str, list] = {"variant": [], "qid": []}
    metrics = [f"ret_{i}" for i in range(10)] + [f"bin_{i}" for i in range(3)] + \
        [f"grid_{i}" for i in range(2)]
    if continuous:
        metrics = [f"ret_{i}" for i in range(15)]
    for m in metrics:
        cols[m] = []
    for v in range(n_var + 1):
        name = "baseline" if v == 0 else f"v{v:02d}"
        shift = 0.0 if v == 0 else rng.normal(0, 0.03)
        cols["variant"] += [name] * n_q
        cols["qid"] += [f"q{i:05d}" for i in range(n_q)]
        for m in metrics:
            base = np.clip(difficulty + shift + rng.normal(0, 0.2, n_q), 0, 1)
            if m.startswith("ret"):
                vals = np.where(unanswerable, np.nan, base)
            elif m.startswith("bin"):
                vals = (rng.random(n_q) < base).astype(float)
            else:
                vals = np.round(base * 2) / 2
            cols[m].append(vals)
    for m in metrics:
        cols[m] = np.concatenate(cols[m])
    return pl.DataFrame(cols), metrics


def loop_one(a: np.ndarray, b: np.ndarray, rng: np.random.Generator, B: int,
             alpha: float = 0.05) -> tuple[float, float, float]:
    """Per-comparison reference: own sign matrix, own bootstrap, BCa CI."""
    ok = np.isfinite(a) & np.isfinite(b)
    d = a[ok] - b[ok]
    n = d.size
    signs = rng.choice([-1.0, 1.0], size=(B, n))
    obs = abs(d.sum())
    p = ((np.abs(signs @ d) >= obs - 1e-9 * np.abs(d).sum()).sum() + 1) / (B + 1)
    idx = rng.integers(0, n, size=(B, n))
    boot = d[idx].mean(axis=1)
    theta = d.mean()
    jack = (d.sum() - d) / (n - 1)
    u = jack.mean() - jack
    acc = (u**3).sum() / (6 * (u**2).sum() ** 1.5)
    z0 = ndtri(np.mean(boot < theta))
    lv = [ndtr(z0 + (z0 + z) / (1 - acc * (z0 + z))) for z in (ndtri(alpha / 2), ndtri(1 - alpha / 2))]
    lo, hi = np.quantile(boot, lv)
    return p, lo, hi


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=1000)
    ap.add_argument("--variants", type=int, default=20)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--loop-sample", type=int, default=30)
    ap.add_argument("--continuous", action="store_true",
                    help="all 15 metrics continuous (every p-value by Monte Carlo)")
    args = ap.parse_args()
    table, metrics = make_table(args.questions, args.variants, continuous=args.continuous)
    n_comp = args.variants * len(metrics)

    t0 = time.perf_counter()
    out = compare_variants(table, baseline="baseline", metrics=metrics,
                           resamples=args.resamples, bootstrap_resamples=args.resamples)
    t_engine = time.perf_counter() - t0
    methods = out["p_method"].value_counts().sort("p_method").rows()

    rng = np.random.default_rng(0)
    vals = {m: table[m].to_numpy().reshape(args.variants + 1, args.questions) for m in metrics}
    pairs = [(m, v) for m in metrics for v in range(1, args.variants + 1)]
    sample = pairs[:: max(1, len(pairs) // args.loop_sample)][: args.loop_sample]
    t0 = time.perf_counter()
    for m, v in sample:
        loop_one(vals[m][v], vals[m][0], rng, args.resamples)
    t_loop = (time.perf_counter() - t0) / len(sample) * n_comp

    print(f"workload: {args.variants} variants x {len(metrics)} metrics x {args.questions} "
          f"questions = {n_comp} comparisons, B = {args.resamples} sign flips + "
          f"{args.resamples} bootstrap (BCa)")
    print(f"p-value methods: {methods}")
    print(f"engine (compare_variants):        {t_engine:8.2f} s   (target <= 5 s)")
    print(f"per-comparison loop (scaled from {len(sample)}): {t_loop:8.2f} s")
    print(f"speed-up: {t_loop / t_engine:.1f}x")


if __name__ == "__main__":
    from ablate.components import catalogue
    catalogue.load()  # register the built-in components, as the CLI does
    main()
