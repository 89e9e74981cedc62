"""Wall time of the README's main job: `ablate run experiments/demo.yaml` from a cold
cache (fresh stage/embedding/generation caches and MLflow store in a temporary folder),
then the same command again unchanged (it computes nothing).

    python benchmarks/demo_time.py [--experiment experiments/demo.yaml] [--keep DIR]

`--keep DIR` runs in DIR (which must not exist) and keeps the sweep folder, caches and
MLflow store there, to read the report afterwards. `--rerun DIR --times N` times N
unchanged re-runs in a DIR kept earlier (no cold run): each prints its seconds and load.

Prints `cold: <s> s` and `unchanged re-run: <s> s`, each a whole process (imports,
Prefect's temporary server, the flow, the report and MLflow logging included), each with
the load average (1, 5, 15 min) before and after it: the machine may be busy, and a figure
is only comparable beside its load.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--experiment", default="experiments/demo.yaml")
    ap.add_argument("--keep", default=None, help="run in this new folder and keep it")
    ap.add_argument("--rerun", default=None, help="only re-run, in this folder kept earlier")
    ap.add_argument("--times", type=int, default=1, help="re-runs with --rerun")
    args = ap.parse_args()
    if args.rerun:
        for _ in range(args.times):
            warm = run_once(args.experiment, Path(args.rerun).resolve())
            print(f"unchanged re-run: {warm[0]:.1f} s  (load average {warm[1]})", flush=True)
        return
    if args.keep:
        Path(args.keep).mkdir(parents=True)
        cold = run_once(args.experiment, Path(args.keep).resolve())
        warm = run_once(args.experiment, Path(args.keep).resolve())
    else:
        with tempfile.TemporaryDirectory(prefix="ablate-demo-") as tmp:
            cold = run_once(args.experiment, Path(tmp))
            warm = run_once(args.experiment, Path(tmp))
    print(f"experiment: {args.experiment}")
    print(f"cold: {cold[0]:.1f} s  (load average {cold[1]}; {os.cpu_count()} cores)")
    print(f"unchanged re-run: {warm[0]:.1f} s  (load average {warm[1]})")


if __name__ == "__main__":
    main()
