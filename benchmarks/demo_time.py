"""Wall time of the README's main job: `ablate run experiments/demo.yaml` from a cold
cache (fresh stage/embedding/generation caches and MLflow store in a temporary folder),
then the same command again unchanged (it computes nothing).

    python benchmarks/demo_time.py [--experiment experiments/demo.yaml] [--keep DIR]

`--keep DIR` runs in DIR (which must not exist) and keeps the sweep folder, caches and
MLflow store there, to read the report afterwards. `--rerun DIR --times N` times N
unchanged re-runs in a DIR kept earlier (no cold run): each prints its seconds and load.

Prints the date, the machine and the commit, then `cold: <s> s` and `unchanged re-run:
<s> s`, each a whole process (imports, Prefect's temporary server, the flow, the report and
MLflow logging included), each with the load average (1, 5, 15 min) before and after it:
the machine may be busy, and a figure is only comparable beside its load; then the cold
run's computed stages per component (count, seconds) from its manifest.

`--busy N` runs N CPU-bound processes (a Python loop each) beside both runs, started
before and stopped after them: the demo on a machine another job keeps busy (issue 42.3:
torch's threads must not fight other processes).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe  # noqa: E402


def load() -> str:
    """The load average (1, 5, 15 min), as `uptime` prints it."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def run_once(experiment: str, tmp: Path) -> tuple[float, str]:
    """(wall seconds, 'load before -> after') of one `ablate run`."""
    before = load()
    cmd = [str(Path(sys.executable).with_name("ablate")), "run", experiment, "--out",
           str(tmp / "runs"), "--cache-dir", str(tmp / "cache"), "--tracking-uri",
           f"sqlite:///{tmp / 'mlflow.db'}"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    seconds = time.perf_counter() - t0
    if proc.returncode:
        sys.exit(f"ablate run failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
    return seconds, f"{before} -> {load()}"


@contextmanager
def busy(n: int) -> Iterator[None]:
    """n CPU-bound processes running while the block runs."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def by_component(folder: Path) -> list[str]:
    """The cold run's computed stages per component, most seconds first."""
    manifest = next((folder / "runs").glob("*/manifest.json"))
    parts = json.loads(manifest.read_text())["stages"]["by_component"]
    rows = sorted(parts.items(), key=lambda kv: -kv[1]["seconds"])
    return [f"  {name:<45} {v['computed']:>3} computed {v['seconds']:>8.1f} s" for name, v in rows]


def commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                         text=True)
    return out.stdout.strip() or "unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--experiment", default="experiments/demo.yaml")
    ap.add_argument("--keep", default=None, help="run in this new folder and keep it")
    ap.add_argument("--rerun", default=None, help="only re-run, in this folder kept earlier")
    ap.add_argument("--times", type=int, default=1, help="re-runs with --rerun")
    ap.add_argument("--busy", type=int, default=0, help="CPU-bound processes beside the runs")
    args = ap.parse_args()
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}; {describe()}; commit {commit()}"
          + (f"; {args.busy} CPU-bound processes beside the runs" if args.busy else ""),
          flush=True)
    with busy(args.busy):
        if args.rerun:
            for _ in range(args.times):
                warm = run_once(args.experiment, Path(args.rerun).resolve())
                print(f"unchanged re-run: {warm[0]:.1f} s  (load average {warm[1]})", flush=True)
            return
        with tempfile.TemporaryDirectory(prefix="ablate-demo-") as tmp:
            folder = Path(args.keep or tmp).resolve()
            if args.keep:
                folder.mkdir(parents=True)
            cold = run_once(args.experiment, folder)
            warm = run_once(args.experiment, folder)
            parts = by_component(folder)
    print(f"experiment: {args.experiment}")
    print(f"cold: {cold[0]:.1f} s  (load average {cold[1]}; {os.cpu_count()} cores)")
    print(f"unchanged re-run: {warm[0]:.1f} s  (load average {warm[1]})")
    print("cold run's computed stages (manifest stages.by_component):")
    print("\n".join(parts))


if __name__ == "__main__":
    main()
