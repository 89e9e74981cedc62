"""The gate's error rates by simulation (components/stats/noninferiority.py): how often
`ablate gate --max-drop D` passes a pipeline whose true drop is exactly D (its type-I
error: target <= alpha) and one that truly did not change (its power), on independent
and clustered questions and on 0/1 metrics (`binary_rows`: ties, changes clustered in
documents), beside the old rule ("fail only when significantly worse by
more than D"), which passed most pipelines that had truly dropped by D.

    python benchmarks/gate_validity.py [--reps 2000] [--seed 0]

stat_validity.py prints these rows in its table (validity_rows).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from ablate.components.stats.clusters import cluster_sums
from ablate.components.stats.noninferiority import PASS, non_inferiority
from ablate.components.stats.paired_tests import TESTS

ALPHA = 0.05
# 0/1 metrics (issue 38): (name, n, documents, change rate); each document has its own
# change rate (Beta(2, .) around the rate: changes cluster), a change is a loss with the
# probability that makes the true mean difference -D
BINARY = (("0/1, 24 independent, 4 % change", 24, 24, 0.04),
          ("0/1, 24 in 6 docs, 10 % change", 24, 6, 0.10),
          ("0/1, 100 in 20 docs, 2 % change", 100, 20, 0.02),
          ("0/1, 200 in 40 docs, 4 % change", 200, 40, 0.04),
          ("0/1, 500 in 16 docs, 4 % change", 500, 16, 0.04),
          ("0/1, 500 in 100 docs, 20 % change", 500, 100, 0.20))
BINARY_MARGIN, BINARY_M = 0.02, 3
DESIGNS = (("independent, n 500", 500, 500, 0.0), ("ICC 0.5, 40 clusters x 10", 400, 40, 0.5),
           ("ICC 0.5, 16 clusters x 30", 480, 16, 0.5))


def _diffs(rng: np.random.Generator, n: int, g: int, icc: float, reps: int, mean: float
           ) -> tuple[np.ndarray, np.ndarray]:
    codes = np.repeat(np.arange(g), n // g)
    d = (mean + 0.1 * (rng.normal(0, math.sqrt(icc), (g, reps))[codes]
                       + rng.normal(0, math.sqrt(1 - icc), (n, reps))))
    return d, codes


def binary_diffs(rng: np.random.Generator, n: int, g: int, rate: float, drop: float,
                 reps: int) -> tuple[np.ndarray, np.ndarray]:
    """reps studies of a 0/1 metric's differences (-1, 0, +1) on n questions in g documents
    (the BINARY note); (questions x reps, codes)."""
    codes = np.repeat(np.arange(g), -(-n // g))[:n]
    doc_rate = rng.beta(2.0, 2.0 * (1 - rate) / rate, (g, reps))
    changed = rng.random((n, reps)) < doc_rate[codes]
    loss = rng.random((n, reps)) < 0.5 + drop / (2 * rate)
    return np.where(changed, np.where(loss, -1.0, 1.0), 0.0), codes


def binary_rows(reps: int, seed: int, quick: bool = False) -> list[dict]:
    """Per 0/1 design: the pass rate at a true drop equal to the margin 0.02 with 3 gated
    metrics (target <= alpha / 3 = 0.0167), with the Tango bound and with the sign-flip
    inversion bound alone (the gate before issue 38), and the pass rate with no change."""
    from ablate.components.stats.clusters import n_clusters
    rng = np.random.default_rng([seed, 0xB1])
    rows = []
    for name, n, g, rate in (BINARY[:2] if quick else BINARY):
        out = {"design": name, "n": n, "G": g, "D": BINARY_MARGIN}
        for label, drop in (("type_I", BINARY_MARGIN), ("power", 0.0)):
            d, codes = binary_diffs(rng, n, g, rate, drop, reps)
            M = np.ones_like(d, dtype=bool)
            cod = None if g == n else codes
            kw = dict(alpha=ALPHA, m=BINARY_M, resamples=2000, seed=seed)
            ni = non_inferiority(d, M, cod, BINARY_MARGIN, **kw)  # type: ignore[arg-type]
            out[label] = float(np.mean([v == PASS for v in ni.verdict]))
            if label == "type_I":
                old = non_inferiority(d, M, cod, BINARY_MARGIN, binary=np.zeros(reps, bool),
                                      **kw)  # type: ignore[arg-type]
                out["signflip_only_type_I"] = float(np.mean([v == PASS for v in old.verdict]))
                _, N = cluster_sums(d, M & (d != 0), codes)
                out["median_k"] = float(np.median(n_clusters(N)))
        rows.append(out)
    return rows


def validity_rows(reps: int, seed: int, quick: bool = False) -> list[dict]:
    """Per design: the margin D (2.5 standard errors), the share of gates passed when the
    true drop is D (type-I) and when there is no change (power), for the non-inferiority
    gate and the old significantly-worse rule."""
    rng = np.random.default_rng([seed, 0x6A7E])
    rows = []
    for name, n, g, icc in (DESIGNS[1:2] if quick else DESIGNS):
        se = 0.1 * math.sqrt((1 + (n // g - 1) * icc) / n)
        margin = 2.5 * se
        out = {"design": name, "n": n, "G": g, "D": round(margin, 4)}
        for label, mean in (("type_I", -margin), ("power", 0.0)):
            d, codes = _diffs(rng, n, g, icc, reps, mean)
            M = np.ones_like(d, dtype=bool)
            ni = non_inferiority(d, M, None if g == n else codes, margin, alpha=ALPHA, m=1,
                                 resamples=2000, seed=seed)
            out[label] = float(np.mean([v == PASS for v in ni.verdict]))
            S, N = cluster_sums(d, M, codes if g < n else np.arange(n))
            p = TESTS.get("permutation")(S, N, resamples=2000, seed=seed, alpha=ALPHA)[0]
            worse = (p <= ALPHA) & (d.mean(axis=0) < -margin)
            out[f"old_rule_{label}"] = float(np.mean(~worse))
        rows.append(out)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    t0 = time.time()
    print(f"gate validity: alpha {ALPHA}, {a.reps} studies per cell, seed {a.seed}; "
          "type_I = passed with the true drop exactly D (target <= alpha), power = passed "
          "with no change")
    for r in validity_rows(a.reps, a.seed) + binary_rows(a.reps, a.seed):
        print("  ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in r.items()))
    print(f"({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
