"""How the built-in retrieval paths shard (the contract: shards.py).

bm25 merges statistics: each worker analyses its shard and returns its CollectionStats;
they are merged; each worker then builds its shard's index with the merged statistics
(idf and avgdl of the whole corpus) and searches every question. The analysed shard stays
on the worker between the phases (`_HELD`; elsewhere it is analysed again).

dense merges exact top k when the dense index it names declares `shards="exact"` (a pair
scored the same over any set of documents: `flat`); the chunk vectors are computed once,
by the stage's own encoder through the embedding cache (so they are the vectors an
unsharded run scores: the encoder's batches depend on which texts are encoded together),
into a `.npy` file beside the texts file, which workers memory-map by row range. Another
index (flat16, hnsw, ivf) is refused when shards are asked for.
"""

from __future__ import annotations

import io
import threading
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ablate.components.contract.records import Chunk, Ranking
from ablate.components.retrieval.ann import DENSE_INDEXES
from ablate.components.retrieval.bm25_stats import CollectionStats
from ablate.components.retrieval.latency import encode_timed
from ablate.components.retrieval.resources import DEFAULT
from ablate.components.retrieval.shards import (
    EXACT_TOPK,
    STATISTICS,
    AnalysedShard,
    ShardJob,
    ShardWork,
    read_rows,
)
from ablate.components.runtime.atomic import atomic_write
from ablate.components.text.chunk_table import id_order

# ---- bm25: statistics merge ---------------------------------------------------------------

_HELD: dict[tuple, AnalysedShard] = {}  # a worker's analysed shards, between the phases
_HELD_LOCK = threading.Lock()


def _analyse(path: str, lo: int, hi: int, analyzer: str, options: dict) -> AnalysedShard:
    from ablate.components.retrieval import analyzers_zh  # noqa: F401 - registers zh ones
    from ablate.components.retrieval.analyzer import get_analyzer
    analyse = get_analyzer(analyzer, options)  # a plugin's: the flow loads them and retries
    ids, texts = read_rows(path, lo, hi)
    return AnalysedShard.of(ids, texts, analyse)


def _held_key(path: str, lo: int, hi: int, analyzer: str, options: dict) -> tuple:
    return path, lo, hi, analyzer, tuple(sorted(options.items()))


def bm25_stats(lo: int, hi: int, path: str, analyzer: str, options: dict) -> CollectionStats:
    """Phase 1: analyse rows [lo, hi), keep them here, return their statistics."""
    shard = _analyse(path, lo, hi, analyzer, options)
    with _HELD_LOCK:
        _HELD[_held_key(path, lo, hi, analyzer, options)] = shard
    return shard.stats()


def bm25_search(lo: int, hi: int, collection: CollectionStats, path: str, analyzer: str,
                options: dict, bm25: tuple[Any, ...], queries: list[list[str]], k: int
                ) -> tuple[list[Ranking], float]:
    """Phase 2: the shard's index with the collection's statistics; every query's top k
    and the seconds the search took."""
    with _HELD_LOCK:
        shard = _HELD.pop(_held_key(path, lo, hi, analyzer, options), None)
    if shard is None:  # phase 1 ran on another worker
        shard = _analyse(path, lo, hi, analyzer, options)
    index = shard.index(collection, *bm25)
    del shard
    index.prepare(len(queries))
    return _timed(index.search_many, queries, k)


def _timed(search: Any, queries: Any, k: int) -> tuple[list[Ranking], float]:
    """Every query's top k and the seconds the search took."""
    t0 = time.perf_counter()
    found = search(queries, k)
    return found, time.perf_counter() - t0


class BM25Sharding:
    merge = STATISTICS

    def refuses(self, cfg: Any) -> str | None:
        return None  # every analyzer and variant: the statistics merge is exact

    def work(self, job: ShardJob) -> ShardWork:
        from ablate.components.retrieval.analyzer import get_analyzer
        r = job.cfg.retrieval
        name, options = r.analyzer, dict(r.analyzer_options)
        analyzer = get_analyzer(name, options)
        t0 = time.perf_counter()
        queries = [list(analyzer(q.question)) for q in job.questions]
        each = (time.perf_counter() - t0) / max(len(job.questions), 1)
        b = r.bm25
        return ShardWork(bm25_search, (str(job.texts), name, options,
                                       (b.k1, b.b, b.epsilon, b.variant, b.delta), queries,
                                       r.depth),
                         [each] * len(job.questions), collect=bm25_stats,
                         collect_args=(str(job.texts), name, options),
                         merge=CollectionStats.merge)


# ---- dense: exact top-k merge ------------------------------------------------------------

def exact_indexes() -> list[str]:
    """The dense indexes that declare an exact shard merge (`shards="exact"`)."""
    return [n for n in DENSE_INDEXES.names()
            if DENSE_INDEXES.declaration(n).info.get("shards") == "exact"]


def vectors_file(texts: Path, encoder: Any, chunks: Sequence[Chunk]) -> Path:
    """The chunk vectors (float32, chunk-id order) of `encoder`, beside the texts."""
    path = texts.with_name(f"{texts.stem}-{encoder.model_id[:16]}.npy")
    if not path.exists():
        in_order = [chunks[i].text for i in id_order(chunks)]
        vectors = np.ascontiguousarray(encoder.encode(in_order), np.float32)
        buf = io.BytesIO()
        np.save(buf, vectors)
        atomic_write(path, buf.getvalue())
    return path


def dense_search(lo: int, hi: int, collection: None, texts: str, vectors: str, index: str,
                 ann: Any, queries: np.ndarray, k: int) -> tuple[list[Ranking], float]:
    """The shard's dense index `index` (its rows of the vectors file, memory-mapped);
    every query's top k and the seconds the search took."""
    ids, _ = read_rows(texts, lo, hi, text=False)
    built = DENSE_INDEXES.get(index)(ids, np.load(vectors, mmap_mode="r")[lo:hi], ann)
    return _timed(built.search, queries, k)


class DenseSharding:
    merge = EXACT_TOPK

    def refuses(self, cfg: Any) -> str | None:
        index = cfg.retrieval.dense_index
        if DENSE_INDEXES.declaration(index).info.get("shards") == "exact":
            return None
        return (f"dense index '{index}' does not shard exactly (dense indexes that do: "
                f"{', '.join(exact_indexes()) or 'none'})")

    def work(self, job: ShardJob) -> ShardWork:
        r = job.cfg.retrieval
        encoder = (job.res or DEFAULT).encoder(r.dense_model, r.dense_backend)
        vectors = vectors_file(Path(job.texts), encoder, job.chunks)
        queries = encode_timed(encoder, [q.question for q in job.questions])
        return ShardWork(dense_search, (str(job.texts), str(vectors), r.dense_index, r.ann,
                                        queries.vectors, r.depth),
                         queries.seconds.tolist(),
                         [q.qid for q, hit in zip(job.questions, queries.reused) if hit])


BM25 = BM25Sharding()
DENSE = DenseSharding()
