"""On-disk embedding cache keyed by (model id, sha256 of the text).

Why: a chunk-size sweep produces many chunk texts that earlier variants already
embedded (and every variant embeds the same questions); embedding is the costliest
retrieval step, so each distinct text is embedded once per model, ever.

Layout: <root>/<model_id>/shard-<digest>.npz, each shard holding `keys` (hex sha256)
and `vecs` (float32 rows). A shard is written whole to a temp file and renamed with
os.replace, so readers never see a partial shard and a killed run loses at most the
batch it was writing. Shards are immutable; concurrent writers at worst write the same
vectors twice. New shards written by other processes are picked up on a miss.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import zipfile
from pathlib import Path
from typing import Sequence

import numpy as np

from ablate.components.atomic import atomic_write


def text_key(text: str) -> str:
    """The cache key of one text: hex sha256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """Key -> vector store for one model; in memory only when `root` is None."""

    def __init__(self, root: Path | None, model_id: str) -> None:
        self.model_id = model_id
        self.dir = None if root is None else Path(root) / re.sub(r"[^A-Za-z0-9._-]", "_", model_id)
        self._rows: dict[str, tuple[int, int]] = {}  # key -> (block, row)
        self._blocks: list[np.ndarray] = []
        self._seen: set[str] = set()  # shard file names already loaded
        self._lock = threading.Lock()
        if self.dir is not None:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._scan()

    def __len__(self) -> int:
        return len(self._rows)

    def _add(self, keys: Sequence[str], vecs: np.ndarray) -> None:
        b = len(self._blocks)
        self._blocks.append(vecs)
        for r, k in enumerate(keys):
            self._rows.setdefault(k, (b, r))

    def _scan(self) -> None:
        """Load shards not loaded yet (ours or other processes')."""
        assert self.dir is not None
        for name in sorted(os.listdir(self.dir)):
            if not (name.startswith("shard-") and name.endswith(".npz")) or name in self._seen:
                continue
            try:
                with np.load(self.dir / name, allow_pickle=False) as z:
                    keys, vecs = [str(k) for k in z["keys"]], np.asarray(z["vecs"], dtype=np.float32)
            except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
                continue  # unreadable (truncated, damaged) shard: ignore it, recompute
            self._seen.add(name)
            self._add(keys, vecs)

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

    def store(self, keys: Sequence[str], vecs: np.ndarray) -> None:
        """Add vectors (one row per key); persisted atomically as one shard."""
        if not len(keys):
            return
        vecs = np.ascontiguousarray(vecs, dtype=np.float32)
        if vecs.shape[0] != len(keys):
            raise ValueError(f"{len(keys)} keys for {vecs.shape[0]} vectors")
        with self._lock:
            self._add(list(keys), vecs)
            if self.dir is None:
                return
            digest = hashlib.sha256("\n".join(keys).encode()).hexdigest()[:24]
            name = f"shard-{digest}.npz"
            atomic_write(self.dir / name, writer=lambda f: np.savez(
                f, keys=np.asarray(keys, dtype="U64"), vecs=vecs))
            self._seen.add(name)
