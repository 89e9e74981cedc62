"""Content-addressed result store on disk: one parquet file per stage key.

Writes are atomic (temporary file, fsync, rename) and each entry carries a sha256
sidecar written after the data; an entry whose data does not match its checksum (or has
none) is treated as missing and recomputed, never used. Safe for concurrent sweeps that
share the folder: two writers of one key write identical content and the rename is atomic.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections import Counter
from pathlib import Path

import polars as pl


def stage_key(stage: str, code_version: str, **parts: object) -> str:
    """Hash of the stage name, code version, the config fields it reads and input keys."""
    blob = json.dumps({"stage": stage, "code": code_version, **parts}, sort_keys=True,
                      default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _atomic_write(path: Path, data: bytes | None = None, writer=None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            if writer is not None:
                writer(f)
            else:
                f.write(data or b"")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Store:
    """Stage results keyed by (stage, key); counts what was computed and reused."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.computed: Counter[str] = Counter()
        self.reused: Counter[str] = Counter()
        self.damaged: Counter[str] = Counter()
        self._lock = threading.Lock()

    def path(self, stage: str, key: str) -> Path:
        return self.root / stage / key[:2] / f"{key}.parquet"

    def has(self, stage: str, key: str) -> bool:
        """True when a complete, undamaged entry exists."""
        data = self.path(stage, key)
        check = data.with_suffix(".sha256")
        if not data.exists() or not check.exists():
            return False
        if check.read_text().strip() != _sha256(data):
            with self._lock:
                self.damaged[stage] += 1
            return False
        return True

    def read(self, stage: str, key: str) -> pl.DataFrame:
        return pl.read_parquet(self.path(stage, key))

    def write(self, stage: str, key: str, frame: pl.DataFrame) -> Path:
        data = self.path(stage, key)
        _atomic_write(data, writer=lambda f: frame.write_parquet(f, statistics=False))
        _atomic_write(data.with_suffix(".sha256"), (_sha256(data) + "\n").encode())
        return data

    def note(self, stage: str, computed: bool) -> None:
        with self._lock:
            (self.computed if computed else self.reused)[stage] += 1

    def counts(self) -> dict[str, dict[str, int]]:
        stages = sorted(set(self.computed) | set(self.reused) | set(self.damaged))
        return {s: {"computed": self.computed[s], "reused": self.reused[s],
                    "damaged": self.damaged[s]} for s in stages}
