"""Per-process memo helpers the retrieval families share, and the cross-encoder memo.

The bm25 path and the `lexical` rerank signal need the same index over the same chunks;
an RRF-k or rerank sweep calls the stages again on identical chunks. Each family keeps
its costly objects in a small LRU keyed by what they are built from (lexical/resources.py:
BM25 indexes; dense/resources.py: encoders; graph/path.py: graphs), with
`chunks_fingerprint` for the chunks and `disk_key` for the name of what is kept on disk.
Small LRUs bound memory.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Sequence, TypeVar

from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Chunk
from ablate.components.text.chunk_table import id_order

T = TypeVar("T")


class LRU:
    def __init__(self, size: int) -> None:
        self.size = size
        self._d: OrderedDict[object, object] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_make(self, key: object, make: Callable[[], T]) -> T:
        with self._lock:
            if key in self._d:
                self._d.move_to_end(key)
                return self._d[key]  # type: ignore[return-value]
            value = make()
            self._d[key] = value
            while len(self._d) > self.size:
                self._d.popitem(last=False)
            return value

    def clear(self) -> None:
        with self._lock:
            self._d.clear()


_CROSS = LRU(2)


def chunks_fingerprint(chunks: Sequence[Chunk]) -> str:
    """Content hash of (chunk_id, text) pairs, order-independent."""
    h = hashlib.sha256()
    for i in id_order(chunks):  # no sorted copy of the chunks
        c = chunks[i]
        h.update(c.chunk_id.encode() + b"\0" + c.text.encode() + b"\1")
    return h.hexdigest()


def disk_key(fmt: str, key: tuple, options: dict[str, str]) -> str:
    """The on-disk name of an index: its memo key, its format, and the content of any
    analyzer option that names a file (a user dictionary), so an edited file is rebuilt."""
    files = {k: hashlib.sha256(Path(v).read_bytes()).hexdigest() for k, v in options.items()
             if isinstance(v, str) and Path(v).is_file()}
    blob = repr((fmt, key, sorted(files.items())))
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def cross_encoder(path: str):
    """A local sentence-transformers CrossEncoder (loaded once per process, CPU, offline)."""
    p = Path(path)
    if not p.is_dir():
        raise InputError(f"cross-encoder model directory not found: {path}",
                         field="rerank.cross_encoder")

    def make():
        from sentence_transformers import CrossEncoder
        return CrossEncoder(str(p), device="cpu", local_files_only=True)

    return _CROSS.get_or_make(str(p.resolve()), make)
