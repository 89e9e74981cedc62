"""What the thread rule chooses while the machine changes under it: the measured rule
(components/runtime/cpu_now.py: other processes' CPU time since the last choice) beside
the 1-minute load-average rule it replaced, once a second, as CPU-bound processes start
and stop. Prints every second, not a summary.

    .venv/bin/python benchmarks/threads_now.py [--busy N] [--seconds S]

--busy N starts N CPU-bound processes (default: cores - 1) for S seconds (default 10),
then stops them and watches S seconds more. A rule that follows the machine now picks
fewer threads within a second of the start and all of them within a second of the end;
the load-average rule moves over about a minute.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, load_average  # noqa: E402

from ablate.components.runtime import cpu_now  # noqa: E402


def _spin() -> None:
    while True:
        pass


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=Path(__file__).parent, check=False).stdout.strip()
    except OSError:
        return "unknown"


def main() -> None:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--busy", type=int, default=max(1, cores - 1))
    ap.add_argument("--seconds", type=int, default=10)
    a = ap.parse_args()
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {describe()}, commit {_commit()}, "
          f"load average {load_average()}")
    print(f"{'t s':>5} {'phase':>6} {'load 1m':>8} {'load rule':>10} {'others now':>11} {'now rule':>9}")
    sampler = cpu_now.OthersBusy()
    sampler.cores()  # the first window
    children: list[mp.Process] = []
    t0 = time.monotonic()
    for second in range(2 * a.seconds + 1):
        if second == 1:
            children = [mp.Process(target=_spin, daemon=True) for _ in range(a.busy)]
            for c in children:
                c.start()
        if second == a.seconds + 1:
            for c in children:
                c.terminate()
            for c in children:
                c.join()
        time.sleep(max(0.0, t0 + second + 1 - time.monotonic()))
        load = os.getloadavg()[0]
        others, _ = sampler.cores()
        by_load = max(1, min(cores, int(cores - max(0.0, load) + 0.5)))
        by_now = max(1, min(cores, int(cores - (others or 0.0) + 0.5)))
        phase = "busy" if 1 <= second <= a.seconds else "quiet"
        print(f"{second + 1:>5} {phase:>6} {load:>8.2f} {by_load:>10} {others or 0.0:>11.2f} {by_now:>9}")
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    main()
