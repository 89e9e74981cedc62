"""The inversion interval (ablate.components.stats.inversion) on the demo's comparisons,
its bisection counting every sign pattern at every step (plain) and only the patterns
its bracket leaves undecided (pruned: ablate.components.stats.inversion_prune; issue 42,
item 5), side by side in one run, alternately; checks that both give the same endpoints
and flags bit for bit and prints the ratio with the date, the machine and the load.

    python benchmarks/inversion_prune.py [--experiment experiments/demo.yaml]
                                         [--cache-dir DIR] [--rounds 3]

Needs the experiment's stage cache (after `python benchmarks/demo_time.py --keep DIR`,
DIR/cache); the interval's inputs are captured from the run's own statistics.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from analysis_tail import cached_run, interval_inputs  # noqa: E402  (the cached run)
from machine import describe, load_average  # noqa: E402


def main() -> None:
    args, ctx = cached_run(__doc__)
    from ablate.components.stats import inversion
    a, k = interval_inputs(ctx)

    times: dict[str, list[float]] = {"plain": [], "pruned": []}
    out: dict[str, tuple[np.ndarray, list[str]]] = {}
    for _ in range(args.rounds):
        for name in times:
            t0 = time.perf_counter()
            lo, hi, flags = inversion.inversion_interval(*a, **k, plain=name == "plain")
            times[name].append(time.perf_counter() - t0)
            out[name] = (np.concatenate([lo, hi]), flags)
    same = (out["plain"][0].tobytes() == out["pruned"][0].tobytes()
            and out["plain"][1] == out["pruned"][1])
    S = a[2]
    print(f"{time.strftime('%Y-%m-%d %H:%M %Z')}; experiment: {args.experiment}; "
          f"{S.shape[1]} columns, {S.shape[0]} clusters; {args.rounds} rounds; "
          f"load average {load_average()}; {describe()}")
    for name, v in times.items():
        print(f"  {name:<10}{statistics.median(v):7.3f} s  (range {min(v):.3f}-{max(v):.3f})")
    print(f"ratio (pruned / plain, medians): "
          f"{statistics.median(times['pruned']) / statistics.median(times['plain']):.2f}; "
          f"endpoints and flags identical: {same}")
    if not same:
        raise SystemExit("the pruned bisection's endpoints differ from the plain one's")


if __name__ == "__main__":
    main()
