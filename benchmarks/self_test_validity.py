"""How often the sweep self-test flags a test (ablate.components.stats.self_test_nulls):
a valid test should be flagged rarely (at most 2 % of sweeps), a liberal one in most.

    python benchmarks/self_test_validity.py [--sweeps 200] [--nulls 1000]

Each simulated sweep has 3 comparisons on the same documents (per-question difference =
the document's effect + noise, true mean 0); the self-test pools 1000 nulls per comparison
(its default) and applies its rule. Per cell: the tests' actual type-I error on the
sweeps' own comparisons (what the self-test should reveal), the mean and 10-90 % range of
the self-test's rate over sweeps, and the share of sweeps flagged (or where it cannot
tell: fewer than 8 changed documents).
"""

from __future__ import annotations

import argparse
import datetime
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.special import stdtr

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, load_average  # noqa: E402

from ablate.components.stats.self_test import SELF_TEST_RESAMPLES  # noqa: E402
from ablate.components.stats.self_test_nulls import (  # noqa: E402
    MIN_CHANGED_TO_TELL,
    cr2_p,
    null_rates,
    off_level,
)
from ablate.components.stats.signflip import montecarlo_pvalues  # noqa: E402

ALPHA = 0.05
COMPARISONS = 3


def cr1_p(S: np.ndarray, N: np.ndarray) -> np.ndarray:
    """CR1 (G/(G-1) factor) with G - 1 df: liberal when one document dominates."""
    n = N.sum(axis=0)
    g = (N > 0).sum(axis=0)
    theta = S.sum(axis=0) / n
    se = np.sqrt(((S - theta * N) ** 2).sum(axis=0) * g / (g - 1)) / n
    return 2.0 * stdtr(g - 1, -np.abs(theta / se))


def sf_p(S: np.ndarray, N: np.ndarray) -> np.ndarray:
    return montecarlo_pvalues(S, SELF_TEST_RESAMPLES, 0)


TESTS = {"sign-flip": sf_p, "CR2 t": cr2_p, "CR1 t": cr1_p}


@dataclass(frozen=True)
class Cell:
    name: str
    docs: int
    per_doc: int
    dominant: float = 0.0   # share of the questions in document 0
    skew: bool = False      # log-normal document effects (skewness 6.2), centred
    tests: tuple[str, ...] = ("sign-flip", "CR2 t")


CELLS = [
    Cell("valid, 16 documents", 16, 6),
    Cell("valid, 40 documents", 40, 5),
    Cell("one document 40 %, 12 documents", 12, 6, dominant=0.4,
         tests=("sign-flip", "CR2 t", "CR1 t")),
    Cell("skewed documents (skew 6.2), 16", 16, 6, skew=True),
    Cell("skewed documents (skew 6.2), 40", 40, 5, skew=True),
    Cell("few documents: 6", 6, 10),
]


def sweep(cell: Cell, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(S, N): documents x comparisons, one sweep's comparisons' cluster sums."""
    sizes = np.full(cell.docs, cell.per_doc)
    if cell.dominant:
        sizes[0] = int(round(cell.dominant * cell.per_doc * (cell.docs - 1) / (1 - cell.dominant)))
    codes = np.repeat(np.arange(cell.docs), sizes)
    S = np.zeros((cell.docs, COMPARISONS))
    for j in range(COMPARISONS):
        if cell.skew:
            u = np.exp(rng.normal(0.0, 1.0, cell.docs)) - np.exp(0.5)
        else:
            u = rng.normal(0.0, 1.0, cell.docs)
        d = 0.1 * u[codes] + rng.normal(0.0, 0.1, codes.size)
        S[:, j] = np.bincount(codes, d, cell.docs)
    return S, np.repeat(sizes[:, None].astype(float), COMPARISONS, axis=1)


def cell_row(cell: Cell, sweeps: int, nulls: int, seed: int) -> dict:
    rng = np.random.default_rng([seed, cell.docs, int(cell.dominant * 100), cell.skew])
    tests = {t: TESTS[t] for t in cell.tests}
    actual = {t: [] for t in tests}
    rates = {t: [] for t in tests}
    flags = {t: 0 for t in tests}
    cannot = 0
    for _ in range(sweeps):
        S, N = sweep(cell, rng)
        for t, fn in tests.items():
            actual[t].append(np.mean(fn(S, N) <= ALPHA))
        if cell.docs < MIN_CHANGED_TO_TELL:
            cannot += 1
            continue
        for t, (r, se, _) in null_rates(S, N, tests, alpha=ALPHA, reps=nulls, rng=rng).items():
            rates[t].append(r)
            flags[t] += off_level(r, se, ALPHA)
    out = {"cell": cell.name, "cannot_tell": cannot / sweeps, "tests": {}}
    for t in tests:
        r = np.array(rates[t])
        out["tests"][t] = {"actual": float(np.mean(actual[t])),
                           "rate": float(r.mean()) if r.size else float("nan"),
                           "q10": float(np.quantile(r, 0.1)) if r.size else float("nan"),
                           "q90": float(np.quantile(r, 0.9)) if r.size else float("nan"),
                           "flagged": flags[t] / sweeps}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweeps", type=int, default=200)
    ap.add_argument("--nulls", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    print(f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {describe()}, "
          f"load {load_average()}, commit {commit}; {a.sweeps} sweeps per cell, "
          f"{COMPARISONS} comparisons x {a.nulls} nulls each, alpha {ALPHA}")
    print("| design | test | actual type-I | self-test rate (10-90 %) | flagged | cannot tell |")
    print("|---|---|---:|---|---:|---:|")
    started = time.perf_counter()
    for cell in CELLS:
        row = cell_row(cell, a.sweeps, a.nulls, a.seed)
        for t, r in row["tests"].items():
            rng_txt = (f"{r['rate']:.3f} ({r['q10']:.3f}-{r['q90']:.3f})"
                       if np.isfinite(r["rate"]) else "-")
            print(f"| {row['cell']} | {t} | {r['actual']:.3f} | {rng_txt} | "
                  f"{r['flagged']:.3f} | {row['cannot_tell']:.2f} |")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
