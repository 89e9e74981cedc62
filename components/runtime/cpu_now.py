"""How many cores other processes keep busy now: their CPU time over the last seconds.

The 1-minute load average lags: a process that started 10 s ago shows as 0.15 of a core,
one that ended 10 s ago still as 0.85. Linux counts every core's busy time in /proc/stat;
the cores this process may run on, less this process's own CPU time over the same window,
are what other processes used. Each reading is kept, so the next decision measures the
window since the last one (the batch just run, with no waiting); a first reading, or one
after a long pause, measures a short probe instead. Where /proc/stat is not there (macOS),
the 1-minute load average less this process's running threads stands in for it.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Callable

PROBE_S = 0.2  # the shortest window measured (a first reading waits this long)
STALE_S = 30.0  # a window longer than this is not "now": probe again


@dataclass(frozen=True)
class Reading:
    """At monotonic time `t`: seconds the allowed cores were busy since boot (`busy`,
    every process) and this process's own CPU seconds (`own`)."""
    t: float
    busy: float
    own: float


def _allowed_cpus() -> set[int] | None:
    return set(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None


def read_proc_stat(text: str, cpus: set[int] | None, tick: float) -> float | None:
    """Busy seconds since boot of the cores in `cpus` (every core when None) from the text
    of /proc/stat: user, nice, system, irq, softirq and steal jiffies (idle and iowait are
    not busy; guest time is already inside user and nice)."""
    busy, seen = 0, False
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or name == "cpu":
            continue
        if cpus is not None and int(name[3:]) not in cpus:
            continue
        v = [int(x) for x in rest.split()[:8]]
        v += [0] * (8 - len(v))
        busy += v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
        seen = True
    return busy / tick if seen else None


def read_now() -> Reading | None:
    """This moment's reading, or None where /proc/stat cannot be read."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            text = f.read()
        tick = float(os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError):
        return None
    busy = read_proc_stat(text, _allowed_cpus(), tick)
    if busy is None:
        return None
    return Reading(time.monotonic(), busy, time.process_time())


class OthersBusy:
    """`cores()`: (cores other processes kept busy, the window's seconds) over the window
    since the previous reading, or over a `probe` of its own when there was none within
    `stale` seconds; a call less than `probe` after the last reading repeats its answer
    (never waits); (None, 0) where nothing can be read."""

    def __init__(self, read: Callable[[], Reading | None] = read_now,
                 sleep: Callable[[float], None] = time.sleep,
                 probe: float = PROBE_S, stale: float = STALE_S) -> None:
        self.read, self.sleep, self.probe, self.stale = read, sleep, probe, stale
        self._last: Reading | None = None
        self._result: tuple[float | None, float] | None = None
        self._lock = threading.Lock()

    def cores(self) -> tuple[float | None, float]:
        with self._lock:
            now = self.read()
            if now is None:
                return None, 0.0
            last = self._last
            if last is None or now.t - last.t > self.stale:
                self.sleep(self.probe)
                last, now = now, self.read()
            elif now.t - last.t < self.probe and self._result is not None:
                return self._result  # too short a window to tell: the last answer stands
            if now is None:
                return None, 0.0
            self._last = now
            window = now.t - last.t
            if window <= 0:
                return 0.0, 0.0
            others = (now.busy - last.busy) - (now.own - last.own)
            self._result = (max(0.0, others / window), window)
            return self._result


SAMPLER = OthersBusy()  # one per process: every stage's decision continues its window
