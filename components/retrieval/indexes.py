"""Per-process memo of the costly retrieval objects: BM25 indexes, encoders, cross-encoders.

The bm25 path and the `lexical` rerank signal need the same index over the same chunks;
an RRF-k or rerank sweep calls the stages again on identical chunks. Building once per
(chunks, analyzer and its options, k1, b, epsilon) keeps those calls cheap. Small LRUs
bound memory.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Sequence, TypeVar

from ablate.components.contract.config import RetrievalConfig
from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Chunk
from ablate.components.retrieval import array_folder, bm25_disk
from ablate.components.retrieval.analyzer import Analyzer, get_analyzer
from ablate.components.retrieval.analyzers_zh import choose_analyzer
from ablate.components.retrieval.bm25 import BM25Index
from ablate.components.retrieval.dense import DenseEncoder
from ablate.components.runtime.models import dense_model_path
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


_BM25 = LRU(4)
_ENCODERS = LRU(2)
_CROSS = LRU(2)


def chunks_fingerprint(chunks: Sequence[Chunk]) -> str:
    """Content hash of (chunk_id, text) pairs, order-independent."""
    h = hashlib.sha256()
    for i in id_order(chunks):  # no sorted copy of the chunks
        c = chunks[i]
        h.update(c.chunk_id.encode() + b"\0" + c.text.encode() + b"\1")
    return h.hexdigest()


def lexical(chunks: Sequence[Chunk], cfg: RetrievalConfig,
            folder: Path | None = None) -> tuple[BM25Index, Analyzer]:
    """The BM25 index of `chunks` under the analyzer and cfg.bm25, and the analyzer for
    queries (memoised; the bm25 path and the `lexical` rerank signal share them). Analyzer
    `auto` is resolved from the chunk texts here when the caller has not resolved it for
    the corpus (the sweep flow does, and reports its choice). With `folder`, the index is
    kept there on disk (bm25_disk: read back memory-mapped by any later call, in this
    process or another, with the same chunks, analyzer and parameters)."""
    name = cfg.analyzer
    if name == "auto":
        name = choose_analyzer([c.text for c in chunks])[0]
    analyzer = get_analyzer(name, cfg.analyzer_options)
    key: tuple = (chunks_fingerprint(chunks), name, tuple(sorted(cfg.analyzer_options.items())),
           cfg.bm25.k1, cfg.bm25.b, cfg.bm25.epsilon)
    if cfg.bm25.variant != "okapi":  # okapi's keys (and index folders) as before variants
        key += (cfg.bm25.variant, cfg.bm25.delta)

    def build() -> BM25Index:
        # analysed one chunk at a time as the index reads them: no list of all tokens
        return BM25Index([c.chunk_id for c in chunks], map(analyzer, (c.text for c in chunks)),
                         k1=cfg.bm25.k1, b=cfg.bm25.b, epsilon=cfg.bm25.epsilon,
                         variant=cfg.bm25.variant, delta=cfg.bm25.delta)

    def make() -> BM25Index:
        if folder is None:
            return build()
        where = Path(folder) / f"bm25-{disk_key(bm25_disk.FORMAT, key, cfg.analyzer_options)}"
        return array_folder.kept(where, bm25_disk.load, build, bm25_disk.save)

    return _BM25.get_or_make(key, make), analyzer


def disk_key(fmt: str, key: tuple, options: dict[str, str]) -> str:
    """The on-disk name of an index: its memo key, its format, and the content of any
    analyzer option that names a file (a user dictionary), so an edited file is rebuilt."""
    files = {k: hashlib.sha256(Path(v).read_bytes()).hexdigest() for k, v in options.items()
             if isinstance(v, str) and Path(v).is_file()}
    blob = repr((fmt, key, sorted(files.items())))
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def clear_lexical() -> None:
    """Forget the memoised BM25 indexes (after the last stage that reads one)."""
    _BM25.clear()


def default_encoder(model: str, backend: str = "torch") -> DenseEncoder:
    """An encoder for `retrieval.dense_model` on `retrieval.dense_backend` without a disk
    cache (an ONNX export is made in memory), for callers given none."""
    path = dense_model_path(model)
    return _ENCODERS.get_or_make((str(path), backend),
                                 lambda: DenseEncoder(path, None, backend=backend))


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
