"""Orchestration overhead: the demo smoke sweep through Prefect + MLflow against the same
stages called directly in one process.

Spec: experiments/demo.yaml without its generator sweep (extractive generator only, so
the run stays short; the demo's other variables are swept). Both sides start from a cold,
separate cache, each in a fresh Python process:

  (flow)   ablate.flows.sweep.run_sweep: Prefect flow, one task per unique stage key, analysis,
           outputs, MLflow logging to SQLite + local artifacts (all in a temp folder);
  (direct) ablate.flows.run.context.build_context, ablate.flows.run.stages.run_stage for every stage in plan
           order, ablate.flows.outputs.write.write_outputs; no Prefect, no MLflow.

The flow uses --workers task-runner threads (default 1, so both sides run stages one at a
time and the ratio is overhead, not parallelism). Timed from after the imports; the
temporary Prefect server's start-up is measured and printed apart, as is process start-up.
Prints flow / direct (target <= 1.15).

    python benchmarks/overhead.py [--spec experiments/demo.yaml] [--tier smoke] [--workers 1]
                                  [--rounds 1]
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
TARGET = 1.15


def write_spec(base: Path, folder: Path) -> Path:
    import yaml
    doc = yaml.safe_load(base.read_text())
    doc["dataset"]["path"] = str((base.parent / doc["dataset"]["path"]).resolve())
    doc["sweeps"] = [s for s in doc.get("sweeps", []) if s["variable"] != "generator.name"]
    doc["baseline"]["generator"] = {**doc["baseline"].get("generator", {}), "name": "extractive"}
    path = folder / "overhead.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def inner(mode: str, spec: str, tier: str, tmp: str, workers: int) -> dict:
    """One side, in this fresh process; returns its timings."""
    t_start = time.perf_counter()
    from ablate.flows import env
    env.prepare(ROOT)
    tmp_p = Path(tmp)
    if mode == "direct":
        from ablate.flows.outputs.write import write_outputs
        from ablate.flows.run.context import RunOptions, build_context
        from ablate.flows.run.stages import run_stage
        t0 = time.perf_counter()
        ctx = build_context(spec, RunOptions(tier=tier, cache_dir=str(tmp_p / "cache")))
        for node in ctx.plan.nodes.values():
            run_stage(ctx, node)
        write_outputs(ctx, tmp_p / "runs", time.time(), {})
        wall = time.perf_counter() - t0
        return {"imports_s": t0 - t_start, "wall_s": wall, "server_s": 0.0,
                "stages": len(ctx.plan.nodes), "variants": len(ctx.variants),
                "questions": len(ctx.questions)}
    from prefect.testing.utilities import prefect_test_harness

    from ablate.flows.sweep import run_sweep
    t0 = time.perf_counter()
    with prefect_test_harness(server_startup_timeout=180):
        t1 = time.perf_counter()
        result = run_sweep(spec, workers=workers, tier=tier, out=str(tmp_p / "runs"),
                           cache_dir=str(tmp_p / "cache"),
                           tracking_uri=f"sqlite:///{tmp_p / 'mlflow.db'}",
                           artifact_root=(tmp_p / "artifacts").as_uri(), mlflow=True)
        wall = time.perf_counter() - t1
    assert result["mlflow"], result
    return {"imports_s": t0 - t_start, "wall_s": wall, "server_s": t1 - t0}


def side(mode: str, spec: Path, tier: str, tmp: Path, workers: int) -> dict:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, __file__, "--inner", mode, str(spec), tier, str(tmp),
                          str(workers)], cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"{mode} side failed:\n{out.stderr[-4000:]}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    r["process_s"] = time.perf_counter() - t0
    return r


def measure(spec: str | None = None, tier: str = "smoke", workers: int = 1,
            rounds: int = 1) -> dict:
    """Alternate the sides `rounds` times (each cold), keep the fastest wall of each."""
    tmp = Path(tempfile.mkdtemp(prefix="ablate-overhead-"))
    runs: dict[str, list[dict]] = {"direct": [], "flow": []}
    try:
        path = write_spec(Path(spec or ROOT / "experiments" / "demo.yaml").resolve(), tmp)
        for i in range(rounds):
            for mode in ("direct", "flow"):
                runs[mode].append(side(mode, path, tier, tmp / f"{mode}-{i}", workers))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    direct, flow = (min(runs[m], key=lambda r: r["wall_s"]) for m in ("direct", "flow"))
    return {"direct": direct, "flow": flow, "ratio": flow["wall_s"] / direct["wall_s"],
            "tier": tier, "workers": workers,
            "walls": {m: [round(r["wall_s"], 1) for r in rs] for m, rs in runs.items()}}


def main() -> None:
    if len(sys.argv) == 7 and sys.argv[1] == "--inner":
        print(json.dumps(inner(*sys.argv[2:6], int(sys.argv[6]))))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", default=None)
    ap.add_argument("--tier", default="smoke")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=1, help="alternating cold rounds; best kept")
    args = ap.parse_args()
    r = measure(args.spec, args.tier, args.workers, args.rounds)
    d, f = r["direct"], r["flow"]
    print(f"demo minus generator sweep (extractive generator), {args.tier} tier: "
          f"{d['variants']} variants x {d['questions']} questions, {d['stages']} unique stages; "
          f"cold caches; flow with {args.workers} worker thread(s)")
    print(f"  direct (run_stage + write_outputs)      {d['wall_s']:8.2f} s")
    print(f"  flow (Prefect + MLflow, run_sweep)      {f['wall_s']:8.2f} s")
    print(f"  Prefect temporary server start-up, apart: {f['server_s']:.2f} s; "
          f"imports: direct {d['imports_s']:.2f} s, flow {f['imports_s']:.2f} s")
    print(f"  walls of every round: {r['walls']}")
    ok = "ok" if r["ratio"] <= TARGET else "MISSED"
    print(f"ratio flow / direct: {r['ratio']:.3f}  (target <= {TARGET}) {ok}")


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    main()
