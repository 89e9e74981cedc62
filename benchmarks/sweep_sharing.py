"""Stage sharing in a sweep: what four extra RRF-k variants and an unchanged re-run cost.

Runs the sweep's stages directly (ablate.flows.run.stages.run_stage over the plan, in plan order, no
Prefect) on the demo data, smoke tier, each scenario in a fresh Python process:

  (a) baseline alone, cold cache
  (b) baseline + four fusion.rrf_k variants, another cold cache
  (c) (b) again, unchanged, on (b)'s cache

(a) and (b) alternate for --rounds rounds and the best wall time of each is kept, since
other load on the machine moves the dense encoding's time a lot; CPU time is shown too.

Each scenario's wall time is measured inside its process from after the imports (data
load, planning, every stage); process start-up (interpreter + imports) is reported
apart. Prints (b)/(a) (target <= 1.15: the variants share chunking, labels, BM25 and the
dense embedding of the corpus, which dominates) and (c)/(b) (target <= 0.10: nothing is
recomputed).

    python benchmarks/sweep_sharing.py [--spec experiments/demo.yaml] [--tier smoke] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RRF_K = [10, 30, 120, 240]


def inner(spec: str, tier: str, cache: str) -> None:
    """One scenario in this (fresh) process; prints a JSON line of timings."""
    t_start = time.perf_counter()
    from ablate.flows import env
    env.prepare(ROOT)
    from ablate.flows.run.context import RunOptions, build_context
    from ablate.flows.run.stages import run_stage
    t_imported, cpu0 = time.perf_counter(), time.process_time()
    ctx = build_context(spec, RunOptions(tier=tier, cache_dir=cache))
    t_planned = time.perf_counter()
    computed = sum(run_stage(ctx, node) for node in ctx.plan.nodes.values())
    t_done = time.perf_counter()
    print(json.dumps({"imports_s": t_imported - t_start, "plan_s": t_planned - t_imported,
                      "stages_s": t_done - t_planned, "wall_s": t_done - t_imported,
                      "cpu_s": time.process_time() - cpu0,
                      "variants": len(ctx.variants), "questions": len(ctx.questions),
                      "stages": len(ctx.plan.nodes), "computed": computed,
                      "seconds": {k: round(v, 2) for k, v in ctx.timings.items()}}))


def write_spec(base: Path, folder: Path, name: str, rrf_ks: list[int]) -> Path:
    import yaml
    doc = yaml.safe_load(base.read_text())
    doc["dataset"]["path"] = str((base.parent / doc["dataset"]["path"]).resolve())
    doc["name"] = f"{doc['name']}-{name}"
    doc.pop("variants", None)
    doc["sweeps"] = [{"variable": "fusion.rrf_k", "values": rrf_ks}] if rrf_ks else []
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def scenario(spec: Path, tier: str, cache: Path) -> dict:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, __file__, "--inner", str(spec), tier, str(cache)],
                         cwd=ROOT, capture_output=True, text=True, check=False)
    total = time.perf_counter() - t0
    if out.returncode != 0:
        sys.exit(f"scenario failed:\n{out.stderr[-4000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["process_s"] = total
    result["startup_s"] = total - result["wall_s"]  # interpreter, imports, exit
    return result


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--inner":
        inner(*sys.argv[2:])
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", default=str(ROOT / "experiments" / "demo.yaml"))
    ap.add_argument("--tier", default="smoke")
    ap.add_argument("--rounds", type=int, default=2,
                    help="Cold (a), (b) pairs, alternated; the best of each is kept.")
    ap.add_argument("--keep", action="store_true", help="Keep the temporary caches.")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ablate-sharing-"))
    try:
        base = write_spec(Path(args.spec).resolve(), tmp, "baseline", [])
        sweep = write_spec(Path(args.spec).resolve(), tmp, "rrf", RRF_K)
        rounds_a, rounds_b = [], []
        for i in range(args.rounds):  # alternate, to share out load from other processes
            rounds_a.append(scenario(base, args.tier, tmp / f"cache-a{i}"))
            rounds_b.append(scenario(sweep, args.tier, tmp / f"cache-b{i}"))
        c = scenario(sweep, args.tier, tmp / f"cache-b{args.rounds - 1}")
        a = min(rounds_a, key=lambda r: r["wall_s"])
        b = min(rounds_b, key=lambda r: r["wall_s"])
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"demo data, {args.tier} tier: {a['questions']} questions; "
          f"(b) = baseline + rrf_k {RRF_K}")
    print(f"{'scenario':<28} {'variants':>8} {'stages':>6} {'computed':>8} {'wall s':>8} "
          f"{'cpu s':>8} {'start-up s':>10}")
    for label, r in (("(a) baseline, cold", a), ("(b) + 4 RRF-k, cold", b),
                     ("(c) (b) again, unchanged", c)):
        print(f"{label:<28} {r['variants']:>8} {r['stages']:>6} {r['computed']:>8} "
              f"{r['wall_s']:>8.2f} {r['cpu_s']:>8.2f} {r['startup_s']:>10.2f}")
    for label, r in (("(a)", a), ("(b)", b)):
        print(f"{label} seconds per stage: " + ", ".join(f"{k} {v:.2f}" for k, v in r["seconds"].items()))
    ba, cb = b["wall_s"] / a["wall_s"], c["wall_s"] / b["wall_s"]
    print(f"(b)/(a) = {ba:.3f}  (target <= 1.15) {'ok' if ba <= 1.15 else 'MISSED'}   "
          f"[cpu time: {b['cpu_s'] / a['cpu_s']:.3f}; walls of every round: "
          f"a {[round(r['wall_s'], 1) for r in rounds_a]}, b {[round(r['wall_s'], 1) for r in rounds_b]}]")
    print(f"(c)/(b) = {cb:.3f}  (target <= 0.10) {'ok' if cb <= 0.10 else 'MISSED'}")
    print(f"process start-up (interpreter + imports), not in the ratios: "
          f"{min(r['startup_s'] for r in (a, b, c)):.2f}-{max(r['startup_s'] for r in (a, b, c)):.2f} s")


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    main()
