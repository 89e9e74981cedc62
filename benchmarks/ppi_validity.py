"""Validity of the judge-corrected estimates (ablate.components.stats.ppi) by simulation:
judges of known bias and noise on clustered questions, a random labelled subset.

Each scenario draws, per question, the true outcome of the baseline and of the variant
(0/1, or graded in [0, 1]) from a latent normal with a cluster effect (intraclass
correlation `icc` on the latent scale; the variant's cluster effect only half shared with
the baseline's, so the difference is clustered too) and a question effect shared by both
answers (the pairing). Marginal means are exact: P(Y = 1) = p_base (baseline) and
p_base + delta (variant). The judge reads the truth with errors: 0/1 outcomes flipped
with asymmetric false-positive / false-negative rates that differ between variant and
baseline (so the raw judged difference is biased), optionally varying by cluster; graded
outcomes shifted by a per-arm bias plus noise, clipped to [0, 1]. A random `labelled`
share of the questions carries the true outcome of both answers (the labels).

Per scenario, R null replicates (delta 0) and R shifted ones (delta > 0) give:
- raw_bias, raw_cover, raw_type_I: the raw judged paired difference (cluster-robust t of
  f_v - f_b, clusters.py): its mean error, interval coverage of the true difference and
  rejection rate under the null (it fails when the judge's errors differ by arm);
- ppi_cover, ppi_type_I: the same for the PPI++ corrected paired difference with its
  cross-fitted lambda, the default (target 0.95 and 0.05 at alpha 0.05);
  insample_cover, insample_type_I: lambda tuned and used on the same data (why the
  default cross-fits); ppi1_cover: classic PPI (lambda = 1); classic_cover: the
  labelled-only difference (lambda = 0); mean_cover, mean_classic_cover: the corrected
  and the labelled-only mean of the variant;
- ppi_width, ppi1_width, classic_width: mean interval widths (PPI++, classic PPI,
  labelled only); lambda: the mean cross-fitted lambda; undefined: share of replicates
  without an interval (fewer than 2 labelled clusters);
then the planner, with each of P pilots (a shifted replicate): the labels plan_labels
says give a target half-width (0.8 x the scenario's mean PPI half-width; `feasible`: the
share of pilots that find it reachable), and the mean half-width of fresh studies with
that many labels (over the feasible pilots: a selected, optimistic set when feasible is
well below 1); and, over every pilot, the half-width it predicts at twice its labels
against fresh studies with twice the labels (x2_predicted_hw, x2_achieved_hw).

    python benchmarks/ppi_validity.py [--reps 2000] [--quick] [--markdown] [--seed 0]

`--quick` (R = 500, a subset of scenarios) is what tests/benchmarks run.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from ablate.components.stats.clusters import cluster_sums, cluster_ttest
from ablate.components.stats.ppi import paired_inputs, ppi_mean, ppi_paired, ppi_parts, ppi_result
from ablate.components.stats.ppi_plan import plan_labels, predicted_half_width

ALPHA = 0.05
SHARED_QUESTION = 0.3  # latent variance of the question effect both answers share
TARGET = 0.8  # the planner's target: this share of the scenario's mean PPI half-width


@dataclass(frozen=True)
class Scenario:
    name: str
    n: int
    clusters: int
    labelled: float  # share of questions labelled (both answers)
    icc: float
    kind: str = "binary"  # binary | graded
    judge_v: tuple[float, float] = (0.05, 0.10)  # binary: (false pos., false neg.); graded: (bias, noise)
    judge_b: tuple[float, float] = (0.20, 0.05)
    cluster_errors: bool = False  # binary: error rates x U(0, 2) per cluster
    p_base: float = 0.6
    delta: float = 0.08

    @property
    def labels(self) -> np.ndarray:
        return np.repeat(np.arange(self.clusters), self.n // self.clusters)

    def draw(self, rng: np.random.Generator, reps: int, delta: float):
        """(y_v, y_b, f_v, f_b): R x n true outcomes and judge scores."""
        g, lab, n = self.clusters, self.labels, self.n
        rho, tau = self.icc, SHARED_QUESTION
        rest = math.sqrt(1.0 - rho - tau)
        u = rng.normal(size=(reps, g))[:, lab]
        w = rng.normal(size=(reps, g))[:, lab]
        e = rng.normal(size=(reps, n)) * math.sqrt(tau)
        z_b = math.sqrt(rho) * u + e + rest * rng.normal(size=(reps, n))
        z_v = math.sqrt(rho / 2) * (u + w) + e + rest * rng.normal(size=(reps, n))
        p_v = self.p_base + delta
        if self.kind == "graded":  # E Phi(a + z) = Phi(a / sqrt 2) for z ~ N(0, 1)
            from scipy.special import ndtr
            y_b = ndtr(math.sqrt(2) * ndtri(self.p_base) + z_b)
            y_v = ndtr(math.sqrt(2) * ndtri(p_v) + z_v)
            f_v = np.clip(y_v + self.judge_v[0] + self.judge_v[1] * rng.normal(size=(reps, n)), 0, 1)
            f_b = np.clip(y_b + self.judge_b[0] + self.judge_b[1] * rng.normal(size=(reps, n)), 0, 1)
            return y_v, y_b, f_v, f_b
        y_b = (ndtri(self.p_base) + z_b > 0).astype(float)
        y_v = (ndtri(p_v) + z_v > 0).astype(float)
        scale = rng.uniform(0, 2, size=(reps, g))[:, lab] if self.cluster_errors else 1.0
        return y_v, y_b, self._judge(rng, y_v, self.judge_v, scale), \
            self._judge(rng, y_b, self.judge_b, scale)

    @staticmethod
    def _judge(rng, y, rates, scale):
        flip = np.where(y > 0.5, rates[1], rates[0]) * scale
        return np.where(rng.uniform(size=y.shape) < flip, 1.0 - y, y)

    def label_mask(self, rng: np.random.Generator, reps: int, n_labels) -> np.ndarray:
        """R x n: a random subset of n_labels questions per replicate (scalar or per row)."""
        rank = np.argsort(rng.uniform(size=(reps, self.n)), axis=1).argsort(axis=1)
        return rank < np.broadcast_to(np.asarray(n_labels)[..., None], (reps, 1))


SCENARIOS = [
    Scenario("0/1, biased judge, ICC 0, 500 q in 50 clusters, 10 % labelled", 500, 50, 0.10, 0.0),
    Scenario("0/1, biased judge, ICC 0.3, 500 q in 25 clusters, 10 % labelled", 500, 25, 0.10, 0.3),
    Scenario("0/1, biased judge, ICC 0.3, 1000 q in 40 clusters, 5 % labelled", 1000, 40, 0.05, 0.3),
    Scenario("0/1, biased judge, ICC 0.3, 200 q in 20 clusters, 20 % labelled", 200, 20, 0.20, 0.3),
    Scenario("0/1, errors vary by cluster, ICC 0.3, 800 q in 40 clusters, 10 %", 800, 40, 0.10, 0.3,
             judge_v=(0.10, 0.20), judge_b=(0.30, 0.05), cluster_errors=True),
    Scenario("0/1, weak judge (30-40 % errors), ICC 0.3, 600 q in 60 clusters, 10 %", 600, 60, 0.10,
             0.3, judge_v=(0.30, 0.30), judge_b=(0.40, 0.30)),
    Scenario("0/1, perfect judge, ICC 0.3, 500 q in 25 clusters, 10 % labelled", 500, 25, 0.10, 0.3,
             judge_v=(0.0, 0.0), judge_b=(0.0, 0.0)),
    Scenario("graded, judge bias +.05/+.15 noise .15, ICC 0.3, 600 q in 30 clusters, 10 %", 600, 30,
             0.10, 0.3, kind="graded", judge_v=(0.05, 0.15), judge_b=(0.15, 0.15)),
]
QUICK = (1, 4, 7)


def _raw(sc: Scenario, f_v: np.ndarray, f_b: np.ndarray):
    """Cluster-robust t of the judged difference, every replicate at once."""
    D = (f_v - f_b).T
    S, N = cluster_sums(D, np.ones_like(D, dtype=bool), sc.labels)
    _, p, lo, hi = cluster_ttest(S, N, ALPHA)
    return S.sum(axis=0) / N.sum(axis=0), p, lo, hi


def _covers(lo, hi, truth) -> np.ndarray:
    return (np.nan_to_num(lo, nan=-np.inf) <= truth) & (np.nan_to_num(hi, nan=np.inf) >= truth)


def scenario_row(sc: Scenario, reps: int, seed: int) -> dict:
    rng = np.random.default_rng([seed, sc.n, sc.clusters, int(sc.labelled * 100), int(sc.icc * 10),
                                 int(sc.judge_v[0] * 100), int(sc.judge_b[0] * 100)])
    n_lab = round(sc.labelled * sc.n)
    cl = sc.labels
    out: dict = {"scenario": sc.name, "N": sc.n, "G": sc.clusters, "labels": n_lab}
    for tag, delta in (("null", 0.0), ("shifted", sc.delta)):
        y_v, y_b, f_v, f_b = sc.draw(rng, reps, delta)
        mask = sc.label_mask(rng, reps, n_lab)
        yl_v, yl_b = np.where(mask, y_v, np.nan), np.where(mask, y_b, np.nan)
        truth = delta  # the true mean difference (graded too: E Y = p exactly)
        est, p_raw, lo, hi = _raw(sc, f_v, f_b)
        res = [ppi_paired(f_v[r], f_b[r], yl_v[r], yl_b[r], cl, alpha=ALPHA) for r in range(reps)]
        insample = [ppi_result(ppi_parts(*paired_inputs(f_v[r], f_b[r], yl_v[r], yl_b[r]), cl),
                               alpha=ALPHA) for r in range(reps)]
        if tag == "null":
            out["raw_type_I"] = float((p_raw < ALPHA).mean())
            out["ppi_type_I"] = float(np.mean([x.p < ALPHA for x in res]))
            out["insample_type_I"] = float(np.mean([x.p < ALPHA for x in insample]))
            continue
        out["raw_bias"] = float(est.mean() - truth)
        out["raw_cover"] = float(_covers(lo, hi, truth).mean())
        out["ppi_cover"] = float(np.mean([_covers(x.ci_low, x.ci_high, truth) for x in res]))
        out["insample_cover"] = float(np.mean([_covers(x.ci_low, x.ci_high, truth)
                                               for x in insample]))
        one = [ppi_paired(f_v[r], f_b[r], yl_v[r], yl_b[r], cl, lam=1.0) for r in range(reps)]
        classic = [ppi_paired(f_v[r], f_b[r], yl_v[r], yl_b[r], cl, lam=0.0) for r in range(reps)]
        out["ppi1_cover"] = float(np.mean([_covers(x.ci_low, x.ci_high, truth) for x in one]))
        out["classic_cover"] = float(np.mean([_covers(x.ci_low, x.ci_high, truth)
                                              for x in classic]))
        mean_v = sc.p_base + delta
        mv = [ppi_mean(f_v[r], yl_v[r], cl, alpha=ALPHA) for r in range(reps)]
        mv0 = [ppi_mean(f_v[r], yl_v[r], cl, alpha=ALPHA, lam=0.0) for r in range(reps)]
        out["mean_cover"] = float(np.mean([_covers(x.ci_low, x.ci_high, mean_v) for x in mv]))
        out["mean_classic_cover"] = float(np.mean([_covers(x.ci_low, x.ci_high, mean_v)
                                                   for x in mv0]))
        out["ppi_width"] = float(np.nanmean([x.ci_high - x.ci_low for x in res]))
        out["ppi1_width"] = float(np.nanmean([x.ci_high - x.ci_low for x in one]))
        out["classic_width"] = float(np.nanmean([x.ci_high - x.ci_low for x in classic]))
        out["lambda"] = float(np.nanmean([x.lam for x in res]))
        out["undefined"] = float(np.mean([bool(x.reason) for x in res]))
        out["_pilots"] = (f_v, f_b, yl_v, yl_b)
    return out


def planner_row(sc: Scenario, row: dict, pilots: int, seed: int) -> dict:
    """Plan from each pilot, then run a fresh study with the planned labels; and each
    pilot's prediction at twice its labels against a fresh study with that many."""
    f_v, f_b, yl_v, yl_b = row.pop("_pilots")
    target = TARGET * row["ppi_width"] / 2
    rng = np.random.default_rng([seed, 99, sc.n, sc.clusters, int(sc.labelled * 100)])
    plans, twice = [], []
    for r in range(min(pilots, f_v.shape[0])):
        d_f, d_y = paired_inputs(f_v[r], f_b[r], yl_v[r], yl_b[r])
        plans.append(plan_labels(d_f, d_y, sc.labels, half_width=target, alpha=ALPHA))
        twice.append(predicted_half_width(d_f, d_y, sc.labels, 2 * row["labels"], alpha=ALPHA))
    ok = [p for p in plans if p.labels is not None]
    labels = np.array([p.labels for p in ok] + [2 * row["labels"]] * len(plans))
    y_v, y_b, g_v, g_b = sc.draw(rng, labels.size, sc.delta)
    mask = sc.label_mask(rng, labels.size, labels)
    hw = np.array([_half(ppi_paired(g_v[r], g_b[r], np.where(mask[r], y_v[r], np.nan),
                                    np.where(mask[r], y_b[r], np.nan), sc.labels, alpha=ALPHA))
                   for r in range(labels.size)])
    nan = math.nan
    return {"scenario": sc.name, "pilot_labels": row["labels"], "target_hw": target,
            "feasible": len(ok) / max(len(plans), 1),
            "planned_labels": float(np.mean([p.labels for p in ok])) if ok else nan,
            "achieved_hw": float(np.nanmean(hw[:len(ok)])) if ok else nan,
            "x2_predicted_hw": float(np.mean(twice)),
            "x2_achieved_hw": float(np.nanmean(hw[len(ok):]))}


def _half(x) -> float:
    return (x.ci_high - x.ci_low) / 2


def _print(title: str, rows: list[dict], markdown: bool) -> None:
    from benchmarks.stat_validity import print_table  # the project root is on sys.path
    print_table(title, rows, markdown)


def main(argv: list[str] | None = None) -> dict[str, list[dict]]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--pilots", type=int, default=200, help="pilots of the planner rows")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    if args.quick:
        args.reps, args.pilots = min(args.reps, 500), min(args.pilots, 100)
    chosen = [SCENARIOS[i] for i in QUICK] if args.quick else SCENARIOS
    print(f"# ppi_validity: alpha {ALPHA}, {args.reps} null + {args.reps} shifted replicates per "
          f"scenario, {args.pilots} planner pilots, seed {args.seed}")
    t0 = time.perf_counter()
    rows, plans = [], []
    for i, sc in enumerate(chosen, 1):
        t = time.perf_counter()
        row = scenario_row(sc, args.reps, args.seed)
        plans.append(planner_row(sc, row, args.pilots, args.seed))
        rows.append(row)
        print(f"[{i}/{len(chosen)}] {sc.name}: {time.perf_counter() - t:.1f} s", file=sys.stderr)
    _print("Raw judged vs judge-corrected paired difference (coverage of the true difference, "
           "type-I under the null)", rows, args.markdown)
    _print("Label planner: target half-width, planned labels, achieved half-width", plans,
           args.markdown)
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
    return {"scenarios": rows, "planner": plans}


if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
    main()
