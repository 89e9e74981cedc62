"""Where the analysis tail after a sweep's last stage goes (issue 42, item 5: <= 2 s on
the demo), phase by phase, from saved outputs: the experiment's run context is built from
its stage cache (every stage cached, as after the run), then each phase that
flows/outputs/write.py's write_outputs runs is timed on its own, in its order, into a
temporary folder: per-question table, statistics (+ worth), manifest (+ chunking
statistics), self-test, drill-down files, report (markdown, HTML, plots) and writing it.
Each phase's median over --rounds is printed with the load average; MLflow logging is not
part of it (it runs in flows/sweep.py, against a store).

    python benchmarks/analysis_tail.py [--experiment experiments/demo.yaml]
                                       [--cache-dir DIR] [--rounds 3]

After `python benchmarks/demo_time.py --keep DIR`, the cache is DIR/cache.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, load_average  # noqa: E402


def cached_run(doc: str) -> tuple[argparse.Namespace, Any]:
    """(the command line: --experiment, --cache-dir, --rounds; the experiment's run
    context built from its stage cache, every stage cached as after the run)."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--experiment", default="experiments/demo.yaml")
    ap.add_argument("--cache-dir", default=".ablate/cache")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    from ablate.components import catalogue
    from ablate.flows.run.context import RunOptions, build_context
    catalogue.load()
    return args, build_context(args.experiment, RunOptions(cache_dir=args.cache_dir))


def interval_inputs(ctx: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments of the run's own inversion_interval call (its statistics run once,
    the call captured): what the interval benchmarks time."""
    from ablate.components.stats import inference
    from ablate.flows.outputs import analysis
    from ablate.flows.outputs import write as w
    per_query, _ = w.collect_per_query(ctx)
    captured: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    real = inference.inversion_interval

    def capture(*a: Any, **k: Any) -> Any:
        captured.append((a, k))
        return real(*a, **k)
    inference.inversion_interval = capture
    try:
        analysis.statistics(ctx, per_query, w.variant_records(ctx), None)
    finally:
        inference.inversion_interval = real
    return captured[0]

def main() -> None:
    args, ctx = cached_run(__doc__)
    from ablate.components.report.build import build_report, write_files
    from ablate.components.report.evidence import load_evidence
    from ablate.components.report.sweep_data import SweepResults
    from ablate.flows.outputs import analysis
    from ablate.flows.outputs import write as w
    from ablate.flows.outputs.evidence import write_evidence
    from ablate.flows.outputs.manifest import chunking_stats
    from ablate.flows.outputs.self_test import self_test_record
    from ablate.flows.outputs.timings import with_reused
    from ablate.flows.outputs.worth import compute_worth
    times: dict[str, list[float]] = {}
    state: dict[str, Any] = {}

    def timed(name: str, fn: Callable[[], Any]) -> Any:
        t0 = time.perf_counter()
        out = fn()
        times.setdefault(name, []).append(time.perf_counter() - t0)
        return out

    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as tmp_:
            tmp = Path(tmp_)
            per_query, timings = timed("per-question table", lambda: w.collect_per_query(ctx))
            timings = with_reused(ctx, timings)
            variants = w.variant_records(ctx)
            stats, factorial, _ = timed("statistics", lambda: analysis.statistics(
                ctx, per_query, variants, None))
            worth = timed("worth", lambda: compute_worth(ctx, per_query, variants,
                                                          analysis.tested(per_query, "none")[0]))
            chunkings = timed("chunking statistics", lambda: chunking_stats(ctx))
            man = timed("manifest", lambda: w._manifest(ctx, "bench", time.time(), {}, chunkings, None))
            man["self_test"] = timed("self-test", lambda: self_test_record(
                ctx, per_query, analysis.tested(per_query, ctx.spec.stats.cluster)))
            timed("write parquet files", lambda: [
                per_query.write_parquet(tmp / "per_query.parquet", statistics=False),
                timings.write_parquet(tmp / "timings.parquet", statistics=False),
                stats.write_parquet(tmp / "stats.parquet", statistics=False)])
            timed("drill-down files", lambda: write_evidence(ctx, tmp))
            results = SweepResults(man, variants, per_query, stats, timings,
                                   tuple(man["no_effect"]), factorial,
                                   evidence=timed("drill-down read", lambda: load_evidence(tmp)),
                                   worth=worth)
            state["files"] = timed("report without plots", lambda: build_report(
                results, ctx.spec.metrics.key, plots=False))
            files = timed("report with plots", lambda: build_report(results, ctx.spec.metrics.key))
            timed("write report files", lambda: write_files(tmp, files))
    med = {k: statistics.median(v) for k, v in times.items()}
    # the tail runs "report with plots" only; the run without plots shows the plots' share
    tail = sum(v for k, v in med.items() if k != "report without plots")
    print(f"experiment: {args.experiment}; {args.rounds} rounds; load average {load_average()}; "
          f"{describe()}")
    for k, v in med.items():
        lo, hi = min(times[k]), max(times[k])
        print(f"  {k:<24}{v:7.3f} s  (range {lo:.3f}-{hi:.3f})")
    print(f"tail (sum of medians, without the no-plots report): {tail:.2f} s; target <= 2 s")
    print(f"plots' share of the report: {med['report with plots'] - med['report without plots']:.3f} s")


if __name__ == "__main__":
    main()
