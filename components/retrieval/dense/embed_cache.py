"""On-disk embedding cache keyed by (model id, sha256 of the text), with the seconds each
vector took to compute.

Why: a chunk-size sweep produces many chunk texts that earlier variants already
embedded (and every variant embeds the same questions); embedding is the costliest
retrieval step, so each distinct text is embedded once per model, ever. The seconds are
kept so that a stage served from the cache can still report what computing its vectors
cost (latency is the latency of the computation, not of the cache lookup).

Layout: <root>/<model_id>/shard-<digest>.npz, each shard holding `keys` (hex sha256),
`vecs` (float32 rows) and `secs` (float64: the model's seconds per text, its call's time
split evenly over the texts of that call). A shard written before seconds were recorded
has no `secs`: its vectors are served as before and its seconds are NaN (unknown, never
0), so a caller that needs them embeds the text again (DenseEncoder.encode_timed) and
stores the seconds with the cached vector in a new shard, which is preferred from then on.
A shard is written whole to a temp file and renamed with os.replace, so readers never see
a partial shard and a killed run loses at most the batch it was writing. Shards are
immutable; concurrent writers at worst write the same vectors twice. New shards written
by other processes are picked up on a miss.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import threading
import zipfile
from pathlib import Path
from typing import Sequence

import numpy as np

from ablate.components.runtime.atomic import atomic_write

SHARD_FORMAT = "2"  # 2: with `secs`; shards without them are format 1


def cache_folder(root: Path, model_id: str) -> Path:
    """The folder one model's shards are kept in under `root`."""
    return Path(root) / re.sub(r"[^A-Za-z0-9._-]", "_", model_id)


def text_key(text: str) -> str:
    """The cache key of one text: hex sha256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """Key -> (vector, seconds) store for one model; in memory only when `root` is None."""

    def __init__(self, root: Path | None, model_id: str) -> None:
        self.model_id = model_id
        self.dir = None if root is None else cache_folder(Path(root), model_id)
        self._rows: dict[str, tuple[int, int]] = {}  # key -> (block, row)
        self._blocks: list[np.ndarray] = []
        self._secs: list[np.ndarray] = []  # per block: seconds per row (NaN: not recorded)
        self._seen: set[str] = set()  # shard file names already loaded
        self._lock = threading.Lock()
        if self.dir is not None:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._scan()

    def __len__(self) -> int:
        return len(self._rows)

    def has(self, key: str) -> bool:
        """Whether a vector is held for `key` (shards loaded when the cache was opened)."""
        return key in self._rows

    def median_seconds(self) -> float:
        """The median seconds per text recorded in the loaded shards (NaN: none recorded)."""
        with self._lock:
            secs = [s[~np.isnan(s)] for s in self._secs]
        both = np.concatenate(secs) if secs else np.empty(0)
        return float(np.median(both)) if len(both) else math.nan

    def _add(self, keys: Sequence[str], vecs: np.ndarray, secs: np.ndarray) -> None:
        """Index a block; a key keeps its first entry unless that one has no seconds and
        this one has."""
        b = len(self._blocks)
        self._blocks.append(vecs)
        self._secs.append(secs)
        for r, k in enumerate(keys):
            loc = self._rows.get(k)
            if loc is None or (math.isnan(self._secs[loc[0]][loc[1]]) and not math.isnan(secs[r])):
                self._rows[k] = (b, r)

    def _scan(self) -> None:
        """Load shards not loaded yet (ours or other processes')."""
        assert self.dir is not None
        for name in sorted(os.listdir(self.dir)):
            if not (name.startswith("shard-") and name.endswith(".npz")) or name in self._seen:
                continue
            try:
                with np.load(self.dir / name, allow_pickle=False) as z:
                    keys, vecs = [str(k) for k in z["keys"]], np.asarray(z["vecs"], dtype=np.float32)
                    secs = (np.asarray(z["secs"], dtype=np.float64) if "secs" in z.files
                            else np.full(len(keys), np.nan))
            except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
                continue  # unreadable (truncated, damaged) shard: ignore it, recompute
            if secs.shape != (len(keys),):
                secs = np.full(len(keys), np.nan)  # not what this format writes: unknown
            self._seen.add(name)
            self._add(keys, vecs, secs)

    def lookup_timed(self, keys: Sequence[str]) -> list[tuple[np.ndarray, float] | None]:
        """The cached (vector, seconds) of each key, or None; seconds are NaN for an entry
        written before they were recorded."""
        with self._lock:
            if self.dir is not None and any(
                    k not in self._rows or math.isnan(self._secs[self._rows[k][0]][self._rows[k][1]])
                    for k in keys):
                self._scan()
            out: list[tuple[np.ndarray, float] | None] = []
            for k in keys:
                loc = self._rows.get(k)
                out.append(None if loc is None else
                           (self._blocks[loc[0]][loc[1]], float(self._secs[loc[0]][loc[1]])))
            return out

    def lookup(self, keys: Sequence[str]) -> list[np.ndarray | None]:
        """The cached vector of each key, or None."""
        with self._lock:
            if self.dir is not None and any(k not in self._rows for k in keys):
                self._scan()
            out: list[np.ndarray | None] = []
            for k in keys:
                loc = self._rows.get(k)
                out.append(None if loc is None else self._blocks[loc[0]][loc[1]])
            return out

    def store(self, keys: Sequence[str], vecs: np.ndarray,
              seconds: Sequence[float] | np.ndarray | None = None) -> None:
        """Add vectors (one row per key) with the seconds each took to compute (None: not
        known, stored as NaN); persisted atomically as one shard."""
        if not len(keys):
            return
        vecs = np.ascontiguousarray(vecs, dtype=np.float32)
        if vecs.shape[0] != len(keys):
            raise ValueError(f"{len(keys)} keys for {vecs.shape[0]} vectors")
        secs = (np.full(len(keys), np.nan) if seconds is None
                else np.asarray(seconds, dtype=np.float64).reshape(-1))
        if secs.shape[0] != len(keys):
            raise ValueError(f"{len(keys)} keys for {secs.shape[0]} seconds")
        with self._lock:
            self._add(list(keys), vecs, secs)
            if self.dir is None:
                return
            blob = SHARD_FORMAT + "\n" + "\n".join(keys)  # a format-1 shard of these keys stays
            name = f"shard-{hashlib.sha256(blob.encode()).hexdigest()[:24]}.npz"
            atomic_write(self.dir / name, writer=lambda f: np.savez(
                f, keys=np.asarray(keys, dtype="U64"), vecs=vecs, secs=secs))
            self._seen.add(name)
