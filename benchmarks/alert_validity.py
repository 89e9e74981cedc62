"""Alerts over many runs by simulation: the false-alarm rate of the drop rule's anytime
e-processes (components/stats/monitor.py) over stable nightly series, beside the naive
rule that tests each night at alpha, and the delay until a real drop is found.

Model of one series (one experiment run every night): an eval set of 100 documents with 4
questions each (400 questions, clustered by document). Question q of document d has a
chance p = expit(c_t + a_d + b_q) of a correct (1) answer, a_d ~ N(0, 0.7^2),
b_q ~ N(0, 0.7^2), c_t setting the population mean of p to the night's true quality mu_t.
A run scores every question 0/1; its key metric is the mean and its standard error the
cluster-robust one (CR1, documents as clusters), what a run records. Designs:

- `shared`: every night the same questions, except 1 of the 100 documents replaced by a
  new one (the eval set rotates: after 60 nights 59 % of it has changed); 30 % of the
  answers redrawn each night (the generator's and judge's nondeterminism), the rest as
  the night before. Between-run correlation: the question-sampling error is common to
  the nights that share questions (corr_1_2, corr_1_60: the correlation of night 1's
  estimate with night 2's and night 60's).
- `shared, deterministic`: the same, with no answer redrawn (a cached, deterministic
  pipeline): only the rotated document changes a night's estimate.
- `fresh`: a new sample of 100 documents every night (conditionally independent runs).

Stable series (the null at its boundary): mu_t = reference - margin every night, with
reference 0.82 and margin 0.02 (the population mean exactly at the level a drop is
measured from). The rules, on z_t = (reference - margin - mean_t) / se_t: `naive` alarms
on the first night whose one-sided test at alpha rejects (z_t >= z_{1-alpha}); `below`
is the threshold rule at the same level (alert: the two-sided 1 - alpha interval wholly
below, z_t >= z_{1-alpha/2}); `anytime_fresh` and `anytime_shared` the e-processes
reaching 1/alpha. A rate is the share of series with any alarm in `nights` nights.

Drops: mu_t = reference for the first `drop_at` nights, then reference - margin - delta
(every answer redrawn on the night the pipeline changes). `found`: the share of series
alarmed on or after the drop night; `median_delay`: nights from the drop to that alarm
(0: the drop night itself), among those found; `alarms_before_drop`: false alarms before.

    python benchmarks/alert_validity.py [--reps 1000] [--nights 60] [--alpha 0.05] [--seed 0] [--quick]

Target: anytime_shared <= alpha on every design, anytime_fresh <= alpha on `fresh` (within
3 binomial standard errors).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ablate.components.stats.monitor import eprocess_fresh, eprocess_shared, naive_z

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks.* as a script

DOCS, PER_DOC = 100, 4
SIGMA_DOC, SIGMA_Q = 0.7, 0.7
REFERENCE, MARGIN = 0.82, 0.02


@dataclass(frozen=True)
class Design:
    name: str
    rotate: int       # documents replaced each night (fresh: all)
    redraw: float     # share of answers redrawn each night
    fresh: bool = False


DESIGNS = {"shared": Design("shared", 1, 0.3),
           "shared, deterministic": Design("shared, deterministic", 1, 0.0),
           "fresh": Design("fresh", DOCS, 1.0, fresh=True)}


@lru_cache(maxsize=None)
def shift(mean: float) -> float:
    """c with E[expit(c + N(0, SIGMA_DOC^2 + SIGMA_Q^2))] = mean (Gauss-Hermite, bisection)."""
    x, w = np.polynomial.hermite_e.hermegauss(80)
    sd = math.hypot(SIGMA_DOC, SIGMA_Q)
    lo, hi = -20.0, 20.0
    for _ in range(100):
        mid = (lo + hi) / 2
        got = float(np.sum(w / (1 + np.exp(-(mid + sd * x)))) / math.sqrt(2 * math.pi))
        lo, hi = (mid, hi) if got < mean else (lo, mid)
    return (lo + hi) / 2


def simulate(design: Design, reps: int, mus: np.ndarray,
             rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(means, standard errors), each reps x nights, of the series of `design` whose
    population quality on night t is mus[t]."""
    nights = len(mus)
    means, ses = np.empty((reps, nights)), np.empty((reps, nights))

    def docs(k: int) -> np.ndarray:
        return rng.normal(0, SIGMA_DOC, (reps, k, 1)) + rng.normal(0, SIGMA_Q, (reps, k, PER_DOC))
    eta = docs(DOCS)
    y = np.zeros((reps, DOCS, PER_DOC))
    for t in range(nights):
        new = np.zeros(DOCS, dtype=bool)
        if t > 0 and design.rotate:
            idx = (t * design.rotate + np.arange(design.rotate)) % DOCS
            eta[:, idx, :] = docs(len(idx))
            new[idx] = True
        draw = rng.random(eta.shape) < 1 / (1 + np.exp(-(shift(float(mus[t])) + eta)))
        if t == 0 or mus[t] != mus[t - 1]:
            y = draw          # first night, or the pipeline changed: every answer is new
        else:
            redo = (rng.random(eta.shape) < design.redraw) | new[None, :, None]
            y = np.where(redo, draw, y)
        g = y.sum(axis=2)
        mean = g.sum(axis=1) / (DOCS * PER_DOC)
        resid = g - PER_DOC * mean[:, None]
        means[:, t] = mean
        ses[:, t] = np.sqrt(DOCS / (DOCS - 1) * (resid ** 2).sum(axis=1)) / (DOCS * PER_DOC)
    return means, ses


def _alarms(z: np.ndarray, alpha: float) -> dict[str, np.ndarray]:
    """Per rule, per series, the boolean alarm of each night (reps x nights)."""
    out = {"naive": z >= naive_z(alpha), "below": z >= naive_z(alpha / 2)}
    thr = math.log(1 / alpha)
    out["anytime_fresh"] = np.array([eprocess_fresh(row) >= thr for row in z])
    out["anytime_shared"] = np.array([eprocess_shared(row) >= thr for row in z])
    return out


def null_row(design: Design, reps: int, nights: int, alpha: float, seed: int) -> dict:
    """False-alarm rates of stable series at the null's boundary."""
    rng = np.random.default_rng(seed)
    means, ses = simulate(design, reps, np.full(nights, REFERENCE - MARGIN), rng)
    z = (REFERENCE - MARGIN - means) / ses
    row: dict = {"design": design.name, "series": reps, "nights": nights,
                 "se": float(ses.mean()),
                 "corr_1_2": float(np.corrcoef(means[:, 0], means[:, 1])[0, 1]),
                 f"corr_1_{nights}": float(np.corrcoef(means[:, 0], means[:, -1])[0, 1]),
                 "per_night": float((z >= naive_z(alpha)).mean())}
    for rule, hits in _alarms(z, alpha).items():
        row[rule] = float(hits.any(axis=1).mean())
    return row


def delay_row(design: Design, reps: int, nights: int, alpha: float, seed: int,
              drop_at: int, delta: float) -> dict:
    """Detection of a drop of `delta` past the margin from night `drop_at` on."""
    rng = np.random.default_rng(seed)
    mus = np.where(np.arange(nights) < drop_at, REFERENCE, REFERENCE - MARGIN - delta)
    means, ses = simulate(design, reps, mus, rng)
    z = (REFERENCE - MARGIN - means) / ses
    row: dict = {"design": design.name, "delta": delta,
                 "delta_se": float(delta / ses[:, drop_at:].mean())}
    for rule, hits in _alarms(z, alpha).items():
        if rule == "below":
            continue
        name = rule.removeprefix("anytime_")
        before = hits[:, :drop_at].any(axis=1)
        after = hits[:, drop_at:]
        found = after.any(axis=1)
        delays = after.argmax(axis=1)[found]
        row[f"found_{name}"] = float(found.mean())
        row[f"median_delay_{name}"] = float(np.median(delays)) if delays.size else float("nan")
        row[f"alarms_before_drop_{name}"] = float(before.mean())
    return row


def main(argv: list[str] | None = None) -> dict[str, list[dict]]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--nights", type=int, default=60)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--drop-at", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="at most 200 series, two drops")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    if args.quick:
        args.reps = min(args.reps, 200)
    deltas = (0.05, 0.10) if args.quick else (0.02, 0.05, 0.10)
    from benchmarks.machine import describe
    from benchmarks.stat_validity import print_table
    print(f"# alert_validity: alpha {args.alpha}, {args.reps} series of {args.nights} nights "
          f"per design, reference {REFERENCE}, margin {MARGIN}, seed {args.seed}; {describe()}")
    t0 = time.perf_counter()
    null = [null_row(d, args.reps, args.nights, args.alpha, args.seed + i)
            for i, d in enumerate(DESIGNS.values())]
    print_table("False alarms of stable series (any alarm in the nights)", null, args.markdown)
    delay = [delay_row(DESIGNS[name], args.reps, args.nights, args.alpha, args.seed + 10 + i,
                       args.drop_at, delta)
             for i, (name, delta) in enumerate((n, d) for n in ("shared", "fresh") for d in deltas)]
    print_table(f"Detection of a drop from night {args.drop_at}", delay, args.markdown)
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
    return {"null": null, "delay": delay}


if __name__ == "__main__":
    main()
