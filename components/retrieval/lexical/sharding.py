"""How the bm25 path shards (the contract: retrieval/shards.py): a statistics merge.

Each worker analyses its shard and returns its CollectionStats; they are merged; each
worker then builds its shard's index with the merged statistics (idf and avgdl of the
whole corpus) and searches every question. The analysed shard stays on the worker between
the phases (`_HELD`; elsewhere it is analysed again).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ablate.components.contract.records import Ranking
from ablate.components.retrieval.lexical.bm25 import BM25Index
from ablate.components.retrieval.lexical.bm25_stats import CollectionStats, term_ids
from ablate.components.retrieval.shards import (
    STATISTICS,
    ShardJob,
    ShardWork,
    read_rows,
    timed_search,
)

DF_BLOCK = 1 << 22  # term ids per block when counting document frequencies


@dataclass
class AnalysedShard:
    """A shard's analysed chunks held compactly: the term id of every token in reading
    order (int32), each chunk's token count and the terms by id."""

    ids: list[str]
    terms: np.ndarray
    lens: np.ndarray
    words: list[str]

    @classmethod
    def of(cls, ids: Sequence[str], texts: Sequence[str],
           analyzer: Callable[[str], Sequence[str]]) -> AnalysedShard:
        terms, lens, words = term_ids(map(analyzer, texts), len(ids))
        if lens.size != len(ids):
            raise ValueError(f"{len(ids)} ids for {lens.size} texts")
        return cls(list(ids), terms.astype(np.int32 if len(words) < 2**31 else np.int64), lens,
                   words)

    def stats(self) -> CollectionStats:
        """The shard's document count, total length and document frequencies, counted a
        block of whole documents (about DF_BLOCK term ids) at a time."""
        v = max(len(self.words), 1)
        df = np.zeros(v, dtype=np.int64)
        ends = np.cumsum(self.lens)
        starts = ends - self.lens
        d0 = 0
        while d0 < self.lens.size:
            d1 = int(np.searchsorted(ends, starts[d0] + DF_BLOCK, side="right"))
            d1 = max(d1, d0 + 1)
            lo, hi = int(starts[d0]), int(ends[d1 - 1])
            doc = np.repeat(np.arange(d1 - d0, dtype=np.int64), self.lens[d0:d1])
            key = np.unique(doc * v + self.terms[lo:hi].astype(np.int64))
            df += np.bincount(key % v, minlength=v)
            d0 = d1
        return CollectionStats(int(self.lens.size), int(self.lens.sum()),
                               {w: int(n) for w, n in zip(self.words, df.tolist()) if n})

    def index(self, collection: CollectionStats, k1: float, b: float,
              epsilon: float, variant: str = "okapi", delta: float | None = None) -> BM25Index:
        """The shard's BM25 index, scoring with the whole collection's statistics (built
        from the term ids as they are)."""
        return BM25Index.of_term_ids(self.ids, self.terms, self.lens, self.words, k1=k1, b=b,
                                     epsilon=epsilon, collection=collection, variant=variant,
                                     delta=delta)


_HELD: dict[tuple, AnalysedShard] = {}  # a worker's analysed shards, between the phases
_HELD_LOCK = threading.Lock()


def _analyse(path: str, lo: int, hi: int, analyzer: str, options: dict) -> AnalysedShard:
    from ablate.components.retrieval.lexical import analyzers_zh  # noqa: F401 - registers zh ones
    from ablate.components.retrieval.lexical.analyzer import get_analyzer
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
    return timed_search(index.search_many, queries, k)



class BM25Sharding:
    merge = STATISTICS

    def refuses(self, cfg: Any) -> str | None:
        return None  # every analyzer and variant: the statistics merge is exact

    def work(self, job: ShardJob) -> ShardWork:
        from ablate.components.retrieval.lexical.analyzer import get_analyzer
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


BM25 = BM25Sharding()
