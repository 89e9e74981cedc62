"""The `bm25` retrieval path: registered in PATHS (retrieval/stages.py) beside dense and graph.

Offline: the BM25 index of the chunking under the analyzer and `retrieval.bm25`
(lexical/resources.py: memoised, kept on disk in the cache's index folder). Online: the
questions analysed and searched together; latency is the batch's seconds split evenly.
Sharding: a statistics merge (lexical/sharding.py).
"""

from __future__ import annotations

import time

from ablate.components.contract.records import Ranking
from ablate.components.retrieval.lexical import sharding
from ablate.components.retrieval.lexical.resources import lexical
from ablate.components.retrieval.stages import PATHS


@PATHS.register("bm25", reads=("retrieval.depth", "retrieval.bm25"),
                uses={"retrieval.analyzer": "analyzer"},
                shards=sharding.BM25,  # statistics merge (lexical/sharding.py)
                latency="batch_mean")  # queries are searched together: per-question = batch / n
def _bm25(chunks, questions, cfg, res, latency) -> dict[str, Ranking]:
    index, analyzer = lexical(chunks, cfg.retrieval, res.index_dir)
    index.prepare(len(questions))  # untimed: numba's compile or cache load, when used
    t0 = time.perf_counter()
    found = index.search_many([analyzer(q.question) for q in questions], cfg.retrieval.depth)
    each = (time.perf_counter() - t0) / max(len(questions), 1)
    if latency is not None:
        latency.update({q.qid: each for q in questions})
    return {q.qid: r for q, r in zip(questions, found)}
