"""Extra wall time of the questions behind the verdicts (issue 37), on a finished sweep:
the drill-down's saved files written from the run context (questions.parquet,
contexts.parquet: flows/outputs/evidence.py, reading the assemble stages from the cache),
read back, and the drill-down section rendered; beside the report build they add to (the
report without plots, measured in the same process, same folder). Prints each part's
median over --rounds, the sum, the ratio to the report build and the target (sum < 1 s).

    python benchmarks/drilldown_time.py SWEEP_DIR [--experiment experiments/demo.yaml]
                                        [--cache-dir .ablate/cache] [--rounds 5]

With --experiment (the sweep's experiment file, its stages in --cache-dir) the writing of
the two files is timed too; without it, only reading and rendering.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

TARGET_S = 1.0


def _median(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("sweep_dir", type=Path)
    ap.add_argument("--experiment", default=None)
    ap.add_argument("--cache-dir", default=".ablate/cache")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    from ablate.components import catalogue
    from ablate.components.report.build import build_report
    from ablate.components.report.drilldown import drilldown_section
    from ablate.components.report.evidence import load_evidence
    from ablate.components.report.sweep_data import load_sweep
    catalogue.load()
    res = load_sweep(args.sweep_dir)
    key = res.key_metrics()
    parts: dict[str, float] = {}
    if args.experiment:
        from ablate.flows.outputs.evidence import write_evidence
        from ablate.flows.run.context import RunOptions, build_context
        ctx = build_context(args.experiment, RunOptions(cache_dir=args.cache_dir))
        with tempfile.TemporaryDirectory() as tmp:
            parts["write questions + contexts"] = _median(lambda: write_evidence(ctx, Path(tmp)), args.rounds)
    parts["read them back"] = _median(lambda: load_evidence(args.sweep_dir), args.rounds)
    parts["render the drill-down"] = _median(
        lambda: drilldown_section(res.per_query, res.stats, res.variants, key, res.evidence), args.rounds)
    report = _median(lambda: build_report(replace(res), plots=False), args.rounds)
    total = sum(parts.values())
    load = os.getloadavg()
    print(f"sweep {args.sweep_dir} ({res.per_query.height} per-question rows, "
          f"{len(res.variants)} variants); median of {args.rounds} rounds; "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    for name, s in parts.items():
        print(f"  {name:28s} {s * 1e3:8.1f} ms")
    print(f"  {'drill-down total':28s} {total * 1e3:8.1f} ms  (target < {TARGET_S:.0f} s: "
          f"{'met' if total < TARGET_S else 'MISSED'})")
    print(f"  {'report build (no plots)':28s} {report * 1e3:8.1f} ms, which includes the "
          f"rendering; drill-down total / report build = {total / report:.2f}")
    print(f"command: {' '.join([os.path.basename(sys.executable), *sys.argv])}")


if __name__ == "__main__":
    main()
