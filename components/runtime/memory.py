"""Handing freed heap memory back to the system (glibc's malloc_trim), and pausing
Python's cyclic garbage collector over work that makes many short-lived objects.

glibc keeps memory that large numeric work freed (torch's activations, say) in its heaps,
fragmented, and the process's resident size keeps the high-water mark of every batch.
Trimming after each batch keeps it near one batch's worth (benchmarks/memory.py).
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Literal

# libc's malloc_trim once looked up; False where there is none
_trim: Callable[[int], Any] | Literal[False] | None = None


def release_freed_memory() -> None:
    """malloc_trim(0): return the free pages of every heap. A no-op without glibc."""
    global _trim
    if _trim is None:
        try:
            import ctypes
            _trim = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _trim = False
    if _trim:
        _trim(0)


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block (when it was on), then on again and
    the block's young objects collected once. Drawing the report's figures makes some
    hundred thousand objects, and each collection they trigger walks every object that
    survived an earlier one: in a process holding a run's data, Prefect and MLflow that
    was a quarter of a second of the demo's report."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect(0)
