"""Coverage of the worth intervals on 0/1 metrics with rare changes (issue 56, item 3):
the audit's designs, where few questions (or few documents) change.

    python benchmarks/worth_rare_changes.py [--reps 400]

A 2^4 design (the worth-demo's size) on a 0/1 metric: a question scores 1 at the baseline with probability 0.4;
otherwise each factor, switched on, fixes it (scores 1) with probability r_i, only in the
documents that can change at all (each with probability s). The true Shapley values and
interaction indices are the expectations of the per-question values, computed exactly
over the 2^4 patterns of which factors fix a question. Per design: each value's coverage
at its Bonferroni level (1 - 0.05/4 = 0.9875 for the 4 values, 1 - 0.05/6 = 0.9917 for the
6 pairs; target >= 0.95, or the interval unbounded) with the widening (ablate.components.stats.
worth_table) and without it (the intervals before issue 56), and how often the widening
applied, with the median width of the widened intervals.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, load_average  # noqa: E402

from ablate.components.stats.worth import all_cells, interaction_weights, shapley_weights  # noqa: E402
from ablate.components.stats.worth_table import worth_inference  # noqa: E402

K = 4
CELLS = all_cells(K)
P_BASE = 0.4
ALPHA = 0.05


@dataclass(frozen=True)
class Design:
    name: str
    docs: int
    per_doc: int
    susceptible: float          # share of documents whose questions can change
    fix: tuple[float, ...]      # per factor, the chance it fixes a question there


DESIGNS = [
    Design("n 50, independent questions", 50, 1, 1.0, (0.015, 0.025, 0.035, 0.04)),
    Design("n 50 in 10 documents", 10, 5, 1.0, (0.015, 0.025, 0.035, 0.04)),
    Design("n 100 in 20 documents, 15 % can change", 20, 5, 0.15, (0.08, 0.12, 0.16, 0.20)),
    Design("n 200 in 20 documents, 10 % can change", 20, 10, 0.10, (0.12, 0.20, 0.28, 0.35)),
    Design("n 300 in 30 documents, 10 % can change", 30, 10, 0.10, (0.15, 0.25, 0.35, 0.40)),
]


def _scores(fixers: np.ndarray, base: np.ndarray) -> np.ndarray:
    """questions x cells: max(baseline, any fixer switched on)."""
    on = np.array(CELLS, dtype=bool)                       # cells x K
    fixed = (fixers[:, None, :] & on[None, :, :]).any(axis=2)
    return np.maximum(base[:, None], fixed).astype(float)


def truth(d: Design) -> np.ndarray:
    """Exact expected Shapley values then interaction indices."""
    W = np.concatenate([shapley_weights(CELLS), interaction_weights(CELLS)], axis=1)
    out = np.zeros(W.shape[1])
    for pattern in itertools.product((False, True), repeat=K):
        prob = np.prod([r if f else 1 - r for f, r in zip(pattern, d.fix)])
        y = _scores(np.array([pattern]), np.zeros(1))
        out += prob * (y @ W)[0]
    return (1 - P_BASE) * d.susceptible * out


def study(d: Design, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    n = d.docs * d.per_doc
    codes = np.repeat(np.arange(d.docs), d.per_doc)
    can = (rng.random(d.docs) < d.susceptible)[codes]
    fixers = (rng.random((n, K)) < np.array(d.fix)) & can[:, None]
    base = (rng.random(n) < P_BASE).astype(float)
    return _scores(fixers, base), codes


def design_row(d: Design, reps: int, seed: int) -> dict:
    rng = np.random.default_rng([seed, d.docs, d.per_doc])
    true = truth(d)
    hit = {True: np.zeros(true.size), False: np.zeros(true.size)}
    widened = np.zeros(true.size)
    widths: list[np.ndarray] = []
    level = np.full(true.size, np.nan)
    for _ in range(reps):
        Y, codes = study(d, rng)
        for widen in (True, False):
            r = worth_inference(Y, CELLS, codes, clustered=d.per_doc > 1, test="t",
                                alpha=ALPHA, widen_binary=widen)
            lo, hi = r.ci_low, r.ci_high
            hit[widen] += (np.isnan(lo) | (lo <= true + 1e-12)) & (np.isnan(hi) | (true <= hi + 1e-12))
            if widen:
                w = np.array(["tango" in m for m in r.ci_method])
                widened += w
                widths.append(np.where(w, hi - lo, np.nan))
                level = r.ci_level
    return {"design": d.name, "truth": true, "cover": hit[True] / reps,
            "before": hit[False] / reps, "widened": widened / reps, "level": level,
            "width": np.nanmedian(np.array(widths), axis=0)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    print(f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {describe()}, "
          f"load {load_average()}, commit {commit}; {a.reps} studies per design, 2^{K} design")
    print("| design | values at level | true values | coverage (before issue 56) | widened | "
          "median width |")
    print("|---|---|---|---|---:|---:|")
    started = time.perf_counter()
    for d in DESIGNS:
        row = design_row(d, a.reps, a.seed)
        for kind, cols in (("Shapley", slice(0, K)), ("interaction", slice(K, None))):
            t = ", ".join(f"{x:.4f}" for x in row["truth"][cols])
            cov = ", ".join(f"{c:.3f} ({b:.3f})" for c, b in zip(row["cover"][cols], row["before"][cols]))
            print(f"| {row['design']} | {kind} at {row['level'][cols][0]:.4f} | {t} | {cov} | "
                  f"{row['widened'][cols].mean():.2f} | {np.nanmedian(row['width'][cols]):.3f} |")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
