"""What machine a benchmark ran on, for the line printed beside its figures: the CPU's
model name with the vector extensions that change speed (AVX2, AVX-512, AMX) and the
cores this process may use."""

from __future__ import annotations

import os
from pathlib import Path


def cpu() -> str:
    """'<model name> (avx2, avx512f, ...)' from /proc/cpuinfo; 'unknown CPU' elsewhere."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown CPU"
    name = next((ln.split(":", 1)[1].strip() for ln in info.splitlines()
                 if ln.startswith("model name")), "unknown CPU")
    flags = next((ln for ln in info.splitlines() if ln.startswith("flags")), "")
    has = [f for f in ("avx2", "avx512f", "amx_tile", "amx_int8") if f" {f}" in flags]
    return f"{name} ({', '.join(has) or 'no AVX2'})"


def describe() -> str:
    """The CPU and the cores this process may use: '<cpu>, 2 cores'."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{cpu()}, {cores} cores"


def load_average() -> str:
    """The load average (1, 5, 15 min), as `uptime` prints it: a timing is comparable
    only beside the load it ran under."""
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())
