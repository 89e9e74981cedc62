"""The inversion interval (ablate.components.stats.inversion) on the demo's comparisons,
with and without the shortcut for columns where no question differs (counted once per
distinct c, weighted: issue 42, item 5), side by side in one run, alternately; checks that
both give the same endpoints bit for bit and prints the ratio with the load average.

    python benchmarks/inversion_zero_columns.py [--experiment experiments/demo.yaml]
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
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from analysis_tail import cached_run, interval_inputs  # noqa: E402  (the cached run)
from machine import describe, load_average  # noqa: E402


def main() -> None:
    args, ctx = cached_run(__doc__)
    from ablate.components.stats import inversion
    a, k = interval_inputs(ctx)

    init = inversion.SignPatterns.__init__

    def without_shortcut(self, *ia: Any, **ik: Any) -> None:
        init(self, *ia, **ik)
        self.zero = np.zeros_like(self.zero)
    times: dict[str, list[float]] = {"with": [], "without": []}
    out: dict[str, np.ndarray] = {}
    for _ in range(args.rounds):
        for name in ("without", "with"):
            inversion.SignPatterns.__init__ = without_shortcut if name == "without" else init
            t0 = time.perf_counter()
            lo, hi, _ = inversion.inversion_interval(*a, **k)
            times[name].append(time.perf_counter() - t0)
            out[name] = np.concatenate([lo, hi])
    inversion.SignPatterns.__init__ = init
    S = a[2]
    zero = int((~np.any(S != 0, axis=0) & (a[3].sum(axis=0) > 0)).sum())
    same = out["with"].tobytes() == out["without"].tobytes()
    print(f"experiment: {args.experiment}; {S.shape[1]} columns, {zero} where no question "
          f"differs; {args.rounds} rounds; load average {load_average()}; {describe()}")
    for name, v in times.items():
        print(f"  {name + ' shortcut':<18}{statistics.median(v):7.3f} s  "
              f"(range {min(v):.3f}-{max(v):.3f})")
    print(f"ratio (with / without, medians): "
          f"{statistics.median(times['with']) / statistics.median(times['without']):.2f}; "
          f"endpoints identical: {same}")


if __name__ == "__main__":
    main()
