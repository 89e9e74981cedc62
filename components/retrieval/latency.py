"""Seconds per question of a retrieval stage, and which of them were recorded earlier.

A stage (a retrieval path, a reranker) fills a `latency` dict with the seconds of its
online work per question. Work served from a cache costs what computing it cost: a query
vector from the embedding cache counts the encode seconds recorded with its entry
(DenseEncoder.encode_timed), so the same questions give the same latency whether the
cache was warm or cold. A `StageSeconds` (a dict, filled as every stage and plugin fills
one) also carries `reused`: the questions whose seconds include such recorded work
rather than work timed now; a plain dict receives the seconds only.

A path that searched an index returns `IndexedRankings`: its rankings with the index's
build and search seconds (and an approximate index's exact top k, a graph's statistics),
which the flow records beside the rankings.
"""

from __future__ import annotations

import time
from typing import Any, Iterable, NamedTuple, Sequence

import numpy as np

from ablate.components.contract.records import Ranking


class TimedVectors(NamedTuple):
    """Vectors of texts (float32 rows, input order), the seconds each took to compute
    (float64) and whether those seconds were recorded earlier with a cache entry (bool)."""

    vectors: np.ndarray
    seconds: np.ndarray
    reused: np.ndarray


class StageSeconds(dict[str, float]):
    """qid -> seconds of a stage's online work, plus `reused`: the qids whose seconds
    include work recorded when it was computed earlier (a cache entry's)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reused: set[str] = set()


def mark_reused(latency: dict[str, float] | None, qids: Iterable[str]) -> None:
    """Mark `qids` reused when `latency` is a StageSeconds (a plain dict has no marks)."""
    if isinstance(latency, StageSeconds):
        latency.reused.update(qids)


def encode_timed(encoder: Any, texts: Sequence[str]) -> TimedVectors:
    """The vectors of `texts` with the seconds each took to compute and whether those were
    recorded earlier: `encoder.encode_timed` (DenseEncoder); an encoder with `encode`
    only (a test's fake, a plugin's) is timed now, its call's time split evenly over the
    texts, nothing reused."""
    timed = getattr(encoder, "encode_timed", None)
    if timed is not None:
        return timed(texts)
    t0 = time.perf_counter()
    vectors = np.asarray(encoder.encode(list(texts)), dtype=np.float32)
    each = (time.perf_counter() - t0) / max(len(texts), 1)
    return TimedVectors(vectors, np.full(len(texts), each), np.zeros(len(texts), dtype=bool))


class IndexedRankings(dict):
    """{qid: ranking} of a path that searched an index, with the index's cost: `build_s`
    seconds to build it (offline) and `search_s` seconds of searching per question (the
    batch split evenly), and for an approximate index `exact`, {qid: the chunk ids of the
    exact top k} over the same vectors (None for an exact index), for recall against flat,
    and `stats`, facts of the index the manifest records (the graph path's nodes, edges,
    mean degree; None when a path has none). Still a plain {qid: ranking} to whatever reads
    only the rankings."""

    def __init__(self, rankings: dict[str, Ranking], *, build_s: float, search_s: float,
                 exact: dict[str, list[str]] | None = None,
                 stats: dict[str, Any] | None = None) -> None:
        super().__init__(rankings)
        self.build_s = float(build_s)
        self.search_s = float(search_s)
        self.exact = exact
        self.stats = stats
