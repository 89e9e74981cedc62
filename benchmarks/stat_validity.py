"""Validity of the statistics by simulation: type-I error, interval coverage and power of
every test x interval, the familywise error of every correction, on data shaped like RAG
evaluations (questions clustered by document).

Scenarios (`SCENARIOS`): independent questions; the paired difference clustered with an
intraclass correlation (ICC) of 0.1 or 0.5; 8, 16 or 40 clusters; a 0/1 metric where
80-95 % of the pairs tie; skewed differences; 30 to 1000 questions. In each, R null
comparisons (true difference 0) and R shifted ones (true difference `delta`, about 2.5
standard errors of the mean) are analysed as a sweep analyses them (compare_variants with
the cluster column; correction none for the single-comparison rates):

- type-I: share of null comparisons with p < alpha (target 0.04-0.06 with >= 10 clusters);
- coverage: share of shifted comparisons whose interval holds the true difference
  (target 0.93-0.97);
- power: share of shifted comparisons with p < alpha;
- agree: share of comparisons where "significant" and "the interval excludes 0" agree.

Then, per correction, the familywise error over families of 4 null variants (target
<= alpha; BH controls the false discovery rate, which equals the FWER under the global
null). Sequential stopping and the non-inferiority gate have their own rows when their
modules provide a simulation (`sequential_rows`, `gate_rows`).

    python benchmarks/stat_validity.py [--reps 2000] [--quick] [--markdown] [--docs PATH]

`--docs docs/statistics.md` writes the Markdown tables (with the command, date and load
average) between the DOCS_BEGIN and DOCS_END markers of that page: the page's table is
this script's output, never typed by hand.

`--quick` (R = 200, a subset of scenarios) is what tests/benchmarks run in CI. Figures in
docs/statistics.md come from the full run with the command printed in its header.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import polars as pl

from ablate.components.stats import compare_variants

ALPHA = 0.05
Generator = Callable[[np.random.Generator, int, float], np.ndarray]  # (rng, R, delta) -> R x n


@dataclass(frozen=True)
class Scenario:
    name: str
    n: int
    clusters: int          # == n: independent questions
    kind: str              # normal | binary | skewed | skewed_clusters | binary_docs
    icc: float = 0.0       # ICC of the difference (binary: half-width of b_g, see icc_d)
    ties: float = 0.0      # binary: share of tied pairs
    dominant: float = 0.0  # share of the questions in cluster 0 (0: equal sizes)
    changing: int = 0      # binary_docs: documents whose questions change (the rest tie)

    @property
    def sizes(self) -> np.ndarray:
        if not self.dominant:
            return np.full(self.clusters, self.n // self.clusters)
        big = int(round(self.dominant * self.n))
        rest = np.full(self.clusters - 1, (self.n - big) // (self.clusters - 1))
        rest[: (self.n - big) % (self.clusters - 1)] += 1
        return np.r_[big, rest]

    @property
    def labels(self) -> np.ndarray:
        return np.repeat(np.arange(self.clusters), self.sizes)

    @property
    def icc_d(self) -> float:
        """The intraclass correlation of the paired difference."""
        if self.kind != "binary":
            return self.icc
        w = self.icc  # binary: the half-width of the cluster's direction effect
        return (1.0 - self.ties) * 4 * w * w / 3

    def differences(self, rng: np.random.Generator, reps: int, delta: float) -> np.ndarray:
        """R x n paired differences with population mean `delta`."""
        g, lab = self.clusters, self.labels
        if self.kind == "binary_docs":
            # `changing` random documents per study change; in them a question changes
            # with prob q = (1 - ties) G / changing; up with prob 1/2 + shift, E d = delta
            q = min(1.0, (1.0 - self.ties) * g / self.changing)
            docs = np.argsort(rng.uniform(size=(reps, g)), axis=1) < self.changing
            change = docs[:, lab] & (rng.uniform(size=(reps, self.n)) < q)
            up = 0.5 + delta / (2 * (1 - self.ties))
            return change * np.where(rng.uniform(size=(reps, self.n)) < up, 1.0, -1.0)
        if self.kind == "binary":
            # a pair changes with prob 1 - ties; it goes up with prob 1/2 + b_g + shift,
            # b_g ~ U(-w, w) the cluster's effect (w = self.icc), so E d = delta
            change = rng.uniform(size=(reps, self.n)) < 1.0 - self.ties
            up = (0.5 + rng.uniform(-self.icc, self.icc, size=(reps, g))[:, lab]
                  + delta / (2 * (1 - self.ties)))
            sign = np.where(rng.uniform(size=(reps, self.n)) < up, 1.0, -1.0)
            return change * sign
        effect = rng.normal(0, math.sqrt(self.icc), size=(reps, g))[:, lab]
        if self.kind == "skewed_clusters":  # the cluster effects, not the noise, are skewed
            effect = (rng.exponential(1.0, size=(reps, g)) - 1.0)[:, lab] * math.sqrt(self.icc)
        if self.kind == "skewed":
            noise = (rng.exponential(1.0, size=(reps, self.n)) - 1.0) * math.sqrt(1 - self.icc)
        else:
            noise = rng.normal(0, math.sqrt(1 - self.icc), size=(reps, self.n))
        return 0.1 * (effect + noise) + delta

    def se(self) -> float:
        """Standard error of the mean difference (for delta = 2.5 SE)."""
        if self.kind == "binary_docs" or self.dominant:  # by simulation, fixed seed
            return float(self.differences(np.random.default_rng(99), 2000, 0.0)
                         .mean(axis=1).std(ddof=1))
        m = self.n // self.clusters
        var = (1.0 - self.ties) if self.kind == "binary" else 0.01
        return math.sqrt(var * (1 + (m - 1) * self.icc_d) / self.n)


SCENARIOS = [
    Scenario("independent, n 200", 200, 200, "normal"),
    Scenario("independent, n 30", 30, 30, "normal"),
    Scenario("ICC 0.1, 40 clusters x 10", 400, 40, "normal", icc=0.1),
    Scenario("ICC 0.5, 40 clusters x 10", 400, 40, "normal", icc=0.5),
    Scenario("ICC 0.5, 16 clusters x 20", 320, 16, "normal", icc=0.5),
    Scenario("ICC 0.5, 8 clusters x 20", 160, 8, "normal", icc=0.5),
    Scenario("0/1, 90 % ties, independent, n 1000", 1000, 1000, "binary", ties=0.9),
    Scenario("0/1, 80 % ties, 40 clusters x 25 (ICC .05)", 1000, 40, "binary", icc=0.45, ties=0.8),
    Scenario("0/1, 85 % ties, 16 clusters x 20 (ICC .04)", 320, 16, "binary", icc=0.45, ties=0.85),
    Scenario("skewed, independent, n 30", 30, 30, "skewed"),
    Scenario("skewed, ICC 0.1, 40 clusters x 25", 1000, 40, "skewed", icc=0.1),
    # the corners of issue 38's audit: one document with 40 % of the questions; 0/1
    # changes in a few documents of many (97 % ties: coverage governed by k, the clusters
    # that changed); skewed cluster effects
    Scenario("dominant 40 %, ICC 0.1, 20 clusters", 200, 20, "normal", icc=0.1, dominant=0.4),
    Scenario("dominant 40 %, ICC 0.1, 40 clusters", 400, 40, "normal", icc=0.1, dominant=0.4),
    Scenario("0/1, 97 % ties, changes in 2 of 50 docs", 1000, 50, "binary_docs", ties=0.97,
             changing=2),
    Scenario("0/1, 97 % ties, changes in 5 of 50 docs", 1000, 50, "binary_docs", ties=0.97,
             changing=5),
    Scenario("0/1, 97 % ties, changes in 10 of 50 docs", 1000, 50, "binary_docs", ties=0.97,
             changing=10),
    Scenario("0/1, 97 % ties, changes in 20 of 50 docs", 1000, 50, "binary_docs", ties=0.97,
             changing=20),
    Scenario("skewed cluster effects, ICC 0.5, 16 clusters", 320, 16, "skewed_clusters",
             icc=0.5),
    Scenario("skewed cluster effects, ICC 0.5, 40 clusters", 800, 40, "skewed_clusters",
             icc=0.5),
]
QUICK = (0, 3, 4, 7, 11)
METHODS = (("permutation", "inversion"), ("permutation", "bca"), ("t", "inversion"))
CORRECTIONS = ("holm", "bonferroni", "bh", "by")
FWER_SCENARIOS = ("independent, n 200", "ICC 0.5, 40 clusters x 10")


def _table(sc: Scenario, diffs: np.ndarray) -> pl.DataFrame:
    """Long table: a zero baseline and one variant per row of diffs."""
    reps, n = diffs.shape
    qid = np.tile(np.arange(n), reps + 1)
    variant = np.repeat(np.array(["baseline"] + [f"v{r:05d}" for r in range(reps)]), n)
    clusters = sc.labels.astype(str) if sc.clusters < sc.n else np.arange(n).astype(str)
    return pl.DataFrame({"variant": variant, "qid": qid, "cluster": np.tile(clusters, reps + 1),
                         "m": np.concatenate([np.zeros(n), diffs.ravel()])})


def _compare(sc: Scenario, diffs: np.ndarray, test: str, ci: str, args) -> pl.DataFrame:
    return compare_variants(_table(sc, diffs), baseline="baseline", metrics=["m"], test=test,
                            ci_method=ci, correction="none", alpha=ALPHA,
                            resamples=args.resamples, bootstrap_resamples=args.resamples,
                            cluster_col="cluster" if sc.clusters < sc.n else None,
                            seed=args.seed)


def _agree(out: pl.DataFrame) -> float:
    lo = out["ci_low"].fill_nan(-math.inf)
    hi = out["ci_high"].fill_nan(math.inf)
    excl = (lo > 0) | (hi < 0)
    return float((excl == out["significant"]).mean())


def method_rows(sc: Scenario, args) -> list[dict]:
    rng = np.random.default_rng([args.seed, sc.n, sc.clusters, int(sc.icc * 100)])
    delta = 2.5 * sc.se()
    null = sc.differences(rng, args.reps, 0.0)
    shifted = sc.differences(rng, args.reps, delta)
    rows = []
    for test, ci in METHODS:
        t0 = time.perf_counter()
        a = _compare(sc, null, test, ci, args)
        b = _compare(sc, shifted, test, ci, args)
        covered = (b["ci_low"].fill_nan(-math.inf) <= delta) & (b["ci_high"].fill_nan(math.inf) >= delta)
        rows.append({"scenario": sc.name, "n": sc.n, "G": sc.clusters, "test": test, "ci": ci,
                     "type_I": float((a["p_value"] < ALPHA).mean()),
                     "coverage": float(covered.mean()),
                     "power": float((b["p_value"] < ALPHA).mean()),
                     "agree": min(_agree(a), _agree(b)),
                     "k": float(b["n_changed_clusters"].median()),  # type: ignore[arg-type]
                     "seconds": round(time.perf_counter() - t0, 1)})
    return rows


def correction_rows(sc: Scenario, args) -> list[dict]:
    """FWER of each correction: families of 4 null variants, one family per metric."""
    rng = np.random.default_rng([args.seed, 7, sc.n, sc.clusters])
    fams = max(50, args.reps)
    diffs = sc.differences(rng, 4 * fams, 0.0)
    n = sc.n
    qid = np.tile(np.arange(n), 5)
    cl = sc.labels.astype(str) if sc.clusters < n else np.arange(n).astype(str)
    cols = {f"m{f:04d}": np.concatenate([np.zeros(n), diffs[4 * f:4 * f + 4].ravel()])
            for f in range(fams)}
    table = pl.DataFrame({"variant": np.repeat(["baseline", "v1", "v2", "v3", "v4"], n),
                          "qid": qid, "cluster": np.tile(cl, 5), **cols})
    rows = []
    for corr in CORRECTIONS:
        out = compare_variants(table, baseline="baseline", metrics=list(cols), correction=corr,
                               alpha=ALPHA, resamples=args.resamples,
                               cluster_col="cluster" if sc.clusters < n else None,
                               seed=args.seed)
        fwer = out.group_by("metric").agg(pl.col("significant").any())["significant"].mean()
        rows.append({"scenario": sc.name, "correction": corr, "families": fams,
                     "fwer": float(fwer)})
    return rows


def _extra_rows(name: str, args, fn_name: str = "validity_rows") -> list[dict]:
    """Rows a module provides for its own procedure (sequential stopping, the gate)."""
    import importlib
    try:
        mod = importlib.import_module(f"benchmarks.{name}")
    except ImportError:
        return []
    fn = getattr(mod, fn_name, None)
    return fn(args.reps, args.seed, quick=args.quick) if fn else []


def print_table(title: str, rows: list[dict], markdown: bool) -> None:
    """A section of rows as a Markdown or aligned text table (floats to 3 decimals, the
    `seconds` column as it is)."""
    if not rows:
        return
    cols = list(rows[0])
    cells = [[f"{r[c]:.3f}" if isinstance(r[c], float) and c != "seconds" else str(r[c])
              for c in cols] for r in rows]
    print(f"\n## {title}\n")
    if markdown:
        print("| " + " | ".join(cols) + " |")
        print("|" + "|".join("---" for _ in cols) + "|")
        for c in cells:
            print("| " + " | ".join(c) + " |")
        return
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths)))
    for row in cells:
        print("  ".join(x.ljust(w) for x, w in zip(row, widths)))


DOCS_BEGIN = "<!-- stat_validity tables: generated by benchmarks/stat_validity.py --docs -->"
DOCS_END = "<!-- end of stat_validity tables -->"


def write_docs(path: str, text: str) -> None:
    """Replace the block between DOCS_BEGIN and DOCS_END of the page at `path`."""
    from pathlib import Path
    page = Path(path).read_text(encoding="utf-8")
    head, sep, rest = page.partition(DOCS_BEGIN)
    _, sep2, tail = rest.partition(DOCS_END)
    if not (sep and sep2):
        raise SystemExit(f"{path}: no {DOCS_BEGIN!r} ... {DOCS_END!r} block")
    Path(path).write_text(f"{head}{DOCS_BEGIN}\n{text.strip()}\n{DOCS_END}{tail}", encoding="utf-8")


def main(argv: list[str] | None = None) -> dict[str, list[dict]]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", help="write the Markdown tables into this page's generated block")
    known, _ = ap.parse_known_args(argv)
    if not known.docs:
        return _run(argv)
    import contextlib
    import datetime
    import io
    import os
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from machine import describe  # benchmarks/machine.py, beside this script
    rest = [a for a in (sys.argv[1:] if argv is None else argv)
            if a != known.docs and a != "--docs" and not a.startswith("--docs=")]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        out = _run(rest + ["--markdown"])
    load = os.getloadavg()
    cmd = "python benchmarks/stat_validity.py " + " ".join(rest + ["--docs", known.docs])
    stamp = (f"`{cmd.strip()}` on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} "
             f"UTC, {describe()}, load average at the end "
             f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    write_docs(known.docs, f"Generated by {stamp}.\n\n{buf.getvalue()}")
    print(buf.getvalue())
    return out


def _run(argv: list[str] | None = None) -> dict[str, list[dict]]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    if args.quick:
        args.reps = min(args.reps, 200)
    chosen = [SCENARIOS[i] for i in QUICK] if args.quick else SCENARIOS
    print(f"# stat_validity: alpha {ALPHA}, {args.reps} null + {args.reps} shifted comparisons "
          f"per scenario and method, {args.resamples} resamples, seed {args.seed}")
    t0 = time.perf_counter()
    out = {"methods": [r for sc in chosen for r in method_rows(sc, args)]}
    print_table("Tests and intervals (correction none)", out["methods"], args.markdown)
    fwer = [sc for sc in chosen if sc.name in FWER_SCENARIOS]  # one independent, one clustered
    out["corrections"] = [r for sc in fwer for r in correction_rows(sc, args)]
    print_table("Familywise error of 4 null variants per family", out["corrections"], args.markdown)
    for name, fn, title in (
            ("sequential_validity", "validity_rows", "Sequential stopping"),
            ("gate_validity", "validity_rows", "Non-inferiority gate (ablate gate)"),
            ("gate_validity", "binary_rows", "Non-inferiority gate on 0/1 metrics (margin 0.02, "
             "3 gated metrics: target type_I <= 0.0167)"),
            ("few_changes", "validity_rows", "0/1 intervals when few documents change: coverage "
             "of the true difference by k (benchmarks/few_changes.py)")):
        key = name if fn == "validity_rows" else f"{name}_{fn}"
        out[key] = _extra_rows(name, args, fn)
        print_table(title, out[key], args.markdown)
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
    return out


if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
    main()
