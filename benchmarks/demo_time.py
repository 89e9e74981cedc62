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

Each run's peak memory: its own process's (wait4) and its process tree's, sampled every
0.2 s, with the tree's processes at that moment and the last console line before it (the
stage then running). `--fresh-state` runs with a new per-machine state folder
(ABLATE_STATE_HOME), as a new user's first run: SmolLM2's conversion, the ONNX export and a
new Prefect server are counted (the server is stopped at the end).

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
import threading
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


def _tree(pid: int) -> list[tuple[int, str]]:
    """(RSS bytes, short command) of `pid` and every process below it."""
    import psutil
    try:
        procs = [psutil.Process(pid)] + psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    rows = []
    for q in procs:
        try:
            cmd = " ".join(q.cmdline()[1:4])[-70:] or q.name()
            rows.append((q.memory_info().rss, cmd))
        except psutil.NoSuchProcess:
            pass
    return rows


class Run:
    """One `ablate run`: wall seconds, load before -> after, peak RSS of its own process
    (wait4) and of its process tree (sampled every 0.2 s), with the tree's processes at that
    peak and the last console line printed before it (the stage running then)."""

    def __init__(self, experiment: str, tmp: Path) -> None:
        self.before = load()
        cmd = [str(Path(sys.executable).with_name("ablate")), "run", experiment, "--out",
               str(tmp / "runs"), "--cache-dir", str(tmp / "cache"), "--tracking-uri",
               f"sqlite:///{tmp / 'mlflow.db'}"]
        lines: list[str] = [""]
        self.peak, self.at_peak, self.line_at_peak = 0, [], ""
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                rows = _tree(proc.pid)
                total = sum(r for r, _ in rows)
                if total > self.peak:
                    self.peak, self.at_peak, self.line_at_peak = total, rows, lines[-1]
                done.wait(0.2)

        def read() -> None:
            assert proc.stdout is not None
            for ln in proc.stdout:
                if ln.strip():
                    lines.append(ln.strip()[-120:])
        threads = [threading.Thread(target=sample, daemon=True),
                   threading.Thread(target=read, daemon=True)]
        for th in threads:
            th.start()
        _, status, usage = os.wait4(proc.pid, 0)
        done.set()
        for th in threads:
            th.join(5)
        self.seconds = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status):
            sys.exit(f"ablate run failed ({status}): {' | '.join(lines[-5:])}")
        self.own_peak = usage.ru_maxrss * 1024
        self.load = f"{self.before} -> {load()}"

    def memory(self) -> str:
        procs = "; ".join(f"{r / 2**30:.2f} GB {c}" for r, c in
                          sorted(self.at_peak, reverse=True) if r > 50 * 2**20)
        return (f"peak memory: process tree {self.peak / 2**30:.2f} GB (sampled every 0.2 s), "
                f"its own process {self.own_peak / 2**30:.2f} GB (wait4)\n"
                f"  at the tree's peak: {procs}\n  last line before it: {self.line_at_peak}")


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
    ap.add_argument("--fresh-state", action="store_true",
                    help="a new per-machine state folder (ABLATE_STATE_HOME), as a new user's")
    args = ap.parse_args()
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}; {describe()}; commit {commit()}"
          + (f"; {args.busy} CPU-bound processes beside the runs" if args.busy else ""),
          flush=True)
    if args.fresh_state:
        state = tempfile.mkdtemp(prefix="ablate-state-")
        os.environ["ABLATE_STATE_HOME"] = state
        print(f"fresh per-machine state in {state} (SmolLM2's conversion, the ONNX export, "
              "a new Prefect server: all counted)", flush=True)
    with busy(args.busy):
        if args.rerun:
            for _ in range(args.times):
                warm = Run(args.experiment, Path(args.rerun).resolve())
                print(f"unchanged re-run: {warm.seconds:.1f} s  (load average {warm.load})", flush=True)
            return
        with tempfile.TemporaryDirectory(prefix="ablate-demo-") as tmp:
            folder = Path(args.keep or tmp).resolve()
            if args.keep:
                folder.mkdir(parents=True)
            cold = Run(args.experiment, folder)
            warm = Run(args.experiment, folder)
            parts = by_component(folder)
    if args.fresh_state:
        subprocess.run([str(Path(sys.executable).with_name("ablate")), "server", "stop"],
                       capture_output=True)
    print(f"experiment: {args.experiment}")
    print(f"cold: {cold.seconds:.1f} s  (load average {cold.load}; {os.cpu_count()} cores)")
    print(cold.memory())
    print(f"unchanged re-run: {warm.seconds:.1f} s  (load average {warm.load})")
    print("cold run's computed stages (manifest stages.by_component):")
    print("\n".join(parts))


if __name__ == "__main__":
    main()
