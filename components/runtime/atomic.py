"""Atomic file writes: a temporary file in the same folder, fsync, then rename.

Readers see the old file or the new one, never a partial one; a killed writer leaves
at most a hidden temporary file (the cache commands remove stale ones). The file gets the
mode any other new file gets (0666 less the process's umask: 0644 under the usual 022),
not the 0600 of a temporary file, so a cache shared by several users or by Dask workers
running as another user can be read (issue 39.8).
"""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path
from typing import BinaryIO, Callable

_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process's umask, read without changing it where the system says it
    (/proc/self/status, Linux 4.7+), else set and restored under a lock."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode of a new regular file: 0666 less the umask."""
    return 0o666 & ~current_umask()


def atomic_write(path: Path, data: bytes | str | None = None,
                 writer: Callable[[BinaryIO], object] | None = None) -> Path:
    """Write `data` (or whatever `writer(file)` writes) to `path` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), file_mode())  # mkstemp makes it 0600
            if writer is not None:
                writer(f)
            else:
                f.write(data.encode("utf-8") if isinstance(data, str) else (data or b""))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
