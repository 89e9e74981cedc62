"""How many threads a CPU-bound library call (torch's intra-op pool) should use now.

On a machine whose other processes keep the cores busy, more threads than idle cores
wait on each other at every operation: each parallel operation ends on a barrier that
holds until the slowest thread has been scheduled (the local generator measured a batch
of 3 at 136 s on 2 threads against 11 s on 1 under load 17 on 2 cores: docs/hardware.md).
On a quiet machine every core is used, as before. What other processes use is measured
now (runtime.cpu_now), not read off the lagging 1-minute load average. For MiniLM, benchmarks/dense_threads.py
measures the rule against torch's default side by side; on 2026-12-04 at load 2.3-3.3 on
2 cores of an AMD EPYC it gave no gain (best rounds 0.91x: round 1 22.96 s with the rule vs 25.21 s,
round 2 18.43 s vs 16.71 s), with identical vectors and rankings.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from ablate.components.runtime import cpu_now

ENV = "ABLATE_TORCH_THREADS"  # a positive integer fixes the count (no load rule)
LOGGER = logging.getLogger("ablate.progress")


def idle_cores(most: int | None = None, cores: int | None = None, load: float | None = None,
               running: int = 0) -> int:
    """The cores other processes leave idle, between 1 and `most` (and the cores):
    ABLATE_TORCH_THREADS when a positive integer; else the cores less what other processes
    use now, rounded (runtime.cpu_now: their CPU time since the last decision, or over a
    0.2 s probe); where that cannot be read, or when `load` is given, the load average less
    this process's own `running` busy threads. A measured choice is logged when it changes."""
    fixed = os.environ.get(ENV, "").strip()
    if fixed.isdigit() and int(fixed) > 0:
        return int(fixed)
    if cores is None:
        cores = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                 else os.cpu_count() or 1)
    measured, window = (None, 0.0) if load is not None else cpu_now.SAMPLER.cores()
    if measured is not None:
        others = measured
    else:
        if load is None:
            load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
        others = max(0.0, load - running)
    n = max(1, min(most or cores, cores, int(cores - others + 0.5)))
    if measured is not None:
        _say_choice(n, cores, measured, window)
    return n


_LAST_CHOICE: list[int] = []


def _say_choice(n: int, cores: int, others: float, window: float) -> None:
    """One line on the progress log when the count differs from the last one logged."""
    if _LAST_CHOICE and _LAST_CHOICE[-1] == n:
        return
    _LAST_CHOICE[:] = [n]
    LOGGER.info("threads: %d of %d cores (other processes used %.1f cores over the last %.1f s)",
                n, cores, others, window)


class torch_threads:
    """A context in which `adjust()` sets torch's intra-op threads to `idle_cores` (at
    most what torch had on entry, this process's busy threads being those it ran with
    last); the count torch had is restored on exit. Inactive (`active` False, or torch
    not imported yet): does nothing and imports nothing.

    The count may change the last bits of a float32 result (a reduction split over
    threads sums in another order), never what a ranking of those results selects
    (tests/components/retrieval/dense/test_dense_threads.py)."""

    def __init__(self, active: bool = True) -> None:
        self.active = active
        self._torch: Any = None
        self._entry = 0

    def __enter__(self) -> "torch_threads":
        if self.active:
            import torch  # the torch backend imports it to load the model anyway
            self._torch = torch
            self._entry = torch.get_num_threads()
        return self

    def adjust(self) -> int:
        """Set and return the threads for the next call (0: inactive)."""
        if self._torch is None:
            return 0
        n = idle_cores(most=self._entry, running=self._torch.get_num_threads())
        if n != self._torch.get_num_threads():
            self._torch.set_num_threads(n)
        return n

    def __exit__(self, *exc: object) -> None:
        if self._torch is not None and self._torch.get_num_threads() != self._entry:
            self._torch.set_num_threads(self._entry)
