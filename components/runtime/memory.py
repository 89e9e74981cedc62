"""Handing freed heap memory back to the system (glibc's malloc_trim).

glibc keeps memory that large numeric work freed (torch's activations, say) in its heaps,
fragmented, and the process's resident size keeps the high-water mark of every batch.
Trimming after each batch keeps it near one batch's worth (benchmarks/memory.py).
"""

from __future__ import annotations

from typing import Any, Callable, Literal

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
