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
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

import polars as pl

from ablate.components.runtime.atomic import atomic_write
from ablate.components.runtime.digest import read_sha256
from ablate.flows.env import file_lock

# caches beside the stages
SIDE_FOLDERS = ("embeddings", "generations", "indexes", "judgments", "onnx", "shards")
STALE_TMP_SECONDS = 3600  # a temporary file this old belongs to no live writer


def stage_key(stage: str, code_version: str, **parts: object) -> str:
    """Hash of the stage name, code version, the config fields it reads and input keys."""
    blob = json.dumps({"stage": stage, "code": code_version, **parts}, sort_keys=True,
                      default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def _touch(path: Path) -> None:
    try:
        os.utime(path)
    except OSError:  # read-only cache or a concurrent prune: reuse still works
        pass


class Store:
    """Stage results keyed by (stage, key); counts what was computed and reused."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)  # created by the first write (`ablate check` writes nothing)
        self.computed: Counter[str] = Counter()
        self.reused: Counter[str] = Counter()
        self.damaged: Counter[str] = Counter()
        self._lock = threading.Lock()

    def path(self, stage: str, key: str) -> Path:
        return self.root / stage / key[:2] / f"{key}.parquet"

    def has(self, stage: str, key: str, use: bool = True) -> bool:
        """True when a complete, undamaged entry exists. `use=False` only looks (`ablate
        check`): the entry's last-use time and the damage count stay as they are."""
        data = self.path(stage, key)
        check = data.with_suffix(".sha256")
        if not data.exists() or not check.exists():
            return False
        if check.read_text().strip() != read_sha256(data):
            if use:
                with self._lock:
                    self.damaged[stage] += 1
            return False
        if use:
            _touch(check)  # the sidecar's mtime is the entry's last use (for `cache prune`)
        return True

    def stored_complete(self, stage: str, key: str) -> bool:
        """True when the entry was stored complete: data with its checksum sidecar. Unlike
        `has`, the checksum is not compared: another process may be rewriting the entry
        (its data replaced, its checksum not yet); an incomplete writer removes the sidecar."""
        data = self.path(stage, key)
        return data.exists() and data.with_suffix(".sha256").exists()

    def read(self, stage: str, key: str) -> pl.DataFrame:
        """The entry's data, read from one open file: polars given a path may open it more
        than once (footer, then pages), and another sweep sharing the cache may replace the
        file in between (the pages of one version under the footer of the other)."""
        with self.path(stage, key).open("rb") as f:
            return pl.read_parquet(f)

    def write(self, stage: str, key: str, frame: pl.DataFrame, complete: bool = True) -> Path:
        """Store a result. An incomplete one (failed generations, or computed from an
        incomplete input) gets no checksum sidecar: this run reads it, the next recomputes it."""
        data = self.path(stage, key)
        # Two sweeps sharing the cache may compute the same entry (with their own latencies):
        # each writes its data and checksum under a lock on the entry's folder, so neither
        # ends up with the other's checksum.
        data.parent.mkdir(parents=True, exist_ok=True)
        with file_lock(data.parent):
            atomic_write(data, writer=lambda f: frame.write_parquet(f, statistics=False))
            if complete:
                atomic_write(data.with_suffix(".sha256"), (read_sha256(data) + "\n").encode())
            else:
                data.with_suffix(".sha256").unlink(missing_ok=True)
        return data

    def note(self, stage: str, computed: bool) -> None:
        with self._lock:
            (self.computed if computed else self.reused)[stage] += 1

    def counts(self) -> dict[str, dict[str, int]]:
        stages = sorted(set(self.computed) | set(self.reused) | set(self.damaged))
        return {s: {"computed": self.computed[s], "reused": self.reused[s],
                    "damaged": self.damaged[s]} for s in stages}


# ---- listing and pruning (`ablate cache info|prune`) ----------------------------------

@dataclass(frozen=True)
class CacheFile:
    """One removable unit: a stage entry (data + sidecar), an embedding shard, a generation,
    or a stale temporary file. `used` is the last use (stage entries) or write time."""

    area: str  # stage name or a side folder ("embeddings", "generations", ...)
    path: Path  # the data file
    bytes: int
    used: float
    kind: str = "entry"  # entry | incomplete (data without sidecar) | tmp


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except OSError:  # removed by a concurrent prune or writer
        return None


def _is_tmp(name: str) -> bool:
    return name.endswith(".tmp") or name.startswith(".tmp-")


def _area_files(area: Path) -> Iterator[CacheFile]:
    side = area.name in SIDE_FOLDERS
    for path in sorted(p for p in area.rglob("*") if p.is_file()):
        if path.suffix == ".sha256":
            if not side and not path.with_suffix(".parquet").exists():
                st = _stat(path)  # a sidecar whose data is gone
                if st is not None:
                    yield CacheFile(area.name, path, st.st_size, st.st_mtime, "incomplete")
            continue
        st = _stat(path)
        if st is None:
            continue
        if _is_tmp(path.name) or any(_is_tmp(d) for d in path.relative_to(area).parts[:-1]):
            # a temporary file, or a file of a temporary folder (a BM25 index being written)
            yield CacheFile(area.name, path, st.st_size, st.st_mtime, "tmp")
        elif side:
            yield CacheFile(area.name, path, st.st_size, st.st_mtime)
        elif path.suffix == ".parquet":
            check = _stat(path.with_suffix(".sha256"))
            if check is None:
                yield CacheFile(area.name, path, st.st_size, st.st_mtime, "incomplete")
            else:
                yield CacheFile(area.name, path, st.st_size + check.st_size, check.st_mtime)


def cache_files(root: Path, areas: Iterable[str] | None = None) -> Iterator[CacheFile]:
    """Every removable file under a cache root, area by area (stages, then side caches)."""
    root = Path(root)
    if not root.is_dir():
        return
    names = sorted(p.name for p in root.iterdir() if p.is_dir())
    names = [n for n in names if n not in SIDE_FOLDERS] + [n for n in SIDE_FOLDERS if n in names]
    for name in names:
        if areas is None or name in areas:
            yield from _area_files(root / name)


def remove_file(item: CacheFile) -> None:
    """Delete one unit; a stage entry loses its sidecar first, so an interrupted delete
    leaves data without a checksum, which the store treats as missing."""
    if item.kind == "entry" and item.path.suffix == ".parquet":
        item.path.with_suffix(".sha256").unlink(missing_ok=True)
    item.path.unlink(missing_ok=True)
    if item.kind == "tmp" and _is_tmp(item.path.parent.name):
        try:
            item.path.parent.rmdir()  # the temporary folder, once its last file is gone
        except OSError:
            pass


def is_stale(item: CacheFile, now: float) -> bool:
    """A temporary or incomplete file old enough to belong to no live writer."""
    return item.kind != "entry" and now - item.used > STALE_TMP_SECONDS
