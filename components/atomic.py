"""Atomic file writes: a temporary file in the same folder, fsync, then rename.

Readers see the old file or the new one, never a partial one; a killed writer leaves
at most a hidden temporary file (the cache commands remove stale ones).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import BinaryIO, Callable


def atomic_write(path: Path, data: bytes | str | None = None,
                 writer: Callable[[BinaryIO], object] | None = None) -> Path:
    """Write `data` (or whatever `writer(file)` writes) to `path` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
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
