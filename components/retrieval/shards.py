"""Sharded retrieval, the pure parts: contiguous shards of a corpus in chunk-id order, an
exact merge of per-shard top-k, and BM25 shards that score with the whole collection's
statistics.

A ranking is best first, ties by chunk id ascending (the project's one tie rule). When
every shard's index gives each document the score one index of the whole corpus would
(dense: `DenseIndex` scores a pair the same over any set of documents; BM25: a shard's
index built with the merged `CollectionStats`), the merged top k of the shards' top k
rankings is the whole index's top k: every document of the global top k is in its own
shard's top k, since a shard holds a subset of the documents ranked by the same order.

The flow's side (Dask workers reading their rows from the shared cache folder) is
ablate.flows.run.sharded.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from itertools import islice
from typing import Callable, Sequence

import numpy as np

from ablate.components.records import Ranking
from ablate.components.retrieval.bm25 import BM25Index
from ablate.components.retrieval.bm25_stats import CollectionStats, term_ids

DF_BLOCK = 1 << 22  # term ids per block when counting document frequencies


def shard_bounds(n: int, shards: int) -> list[tuple[int, int]]:
    """`shards` contiguous row ranges [lo, hi) covering 0..n, sizes differing by at most one
    (fewer when n < shards: no empty shard)."""
    if shards < 1:
        raise ValueError(f"shards must be at least 1, got {shards}")
    shards = max(1, min(shards, n))
    base, extra = divmod(n, shards)
    out, lo = [], 0
    for i in range(shards):
        hi = lo + base + (1 if i < extra else 0)
        out.append((lo, hi))
        lo = hi
    return out


def _order(item: tuple[str, float]) -> tuple[float, str]:
    return -item[1], item[0]


def merge_rankings(parts: Sequence[Ranking], k: int) -> Ranking:
    """The top k of the union of rankings that are each best first with ties by id (a
    k-way merge; exact: the scores are compared as they are)."""
    if k <= 0:
        return []
    return list(islice(heapq.merge(*parts, key=_order), k))


def merge_shards(per_shard: Sequence[Sequence[Ranking]], k: int) -> list[Ranking]:
    """Question by question, the merge of each shard's ranking: per_shard[s][q] is shard
    s's ranking of question q (every shard answers the same questions in order)."""
    if not per_shard:
        return []
    n = len(per_shard[0])
    if any(len(p) != n for p in per_shard):
        raise ValueError("shards answered different numbers of questions")
    return [merge_rankings([p[q] for p in per_shard], k) for q in range(n)]


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
