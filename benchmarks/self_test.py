"""The sweep self-test's cost and figures on a finished sweep folder (issue 38, item 5).

    python benchmarks/self_test.py SWEEP_DIR [--rounds 3]

Runs ablate.components.stats.self_test on the folder's per_query.parquet with the sweep's
own settings and key metrics, prints each round's seconds (and the load average) and the
families' type-I error (and a bootstrap interval's coverage) with Monte Carlo errors."""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import polars as pl

from ablate.components.report.sweep_data import DEFAULT_KEY, present_key
from ablate.components.stats.clusters import cluster_column
from ablate.components.stats.self_test import self_test


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("sweep_dir", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    man = json.loads((a.sweep_dir / "manifest.json").read_text())
    pq = pl.read_parquet(a.sweep_dir / "per_query.parquet")
    st = man["settings"]["stats"]
    metrics = [c for c in pq.columns if "/" in c]
    key = [m for m in present_key(man["settings"]["metrics"].get("key") or DEFAULT_KEY, metrics)
           if m in metrics]
    cluster = cluster_column(st.get("cluster"), pq.columns)
    rec = {}
    for r in range(a.rounds):
        t = time.perf_counter()
        rec = self_test(pq, baseline="baseline", metrics=key, test=st["test"],
                        ci_method=st["ci_method"], alpha=st["alpha"],
                        bootstrap_resamples=st["bootstrap_resamples"], seed=man["seed"],
                        cluster_col=cluster)
        print(f"round {r + 1}: {time.perf_counter() - t:.2f} s (load {os.getloadavg()[0]:.1f})")
    print(f"{len(rec['comparisons'])} comparisons: {', '.join(rec['comparisons'])}")
    if rec.get("cannot_tell"):
        print(f"cannot tell: {rec['cannot_tell']}")
    for f in rec["families"]:
        cov = (f"coverage {f['coverage']:.3f} ± {f['coverage_mc_se']:.3f} ({f['alternatives']})"
               if f.get("coverage") is not None else f"coverage: {f.get('coverage_note')}")
        print(f"{f['family']:>12}: type-I {f['type_i']:.3f} ± {f['type_i_mc_se']:.3f} "
              f"({f['nulls']} nulls), {f['interval']} {cov}, off level: {f['off_level']}")

if __name__ == "__main__":
    main()
