"""An example plugin: a TF-IDF retrieval path built on scikit-learn.

One file and one registration: the path declares the config fields it reads, so ablate
keys, caches, shares and tracks it like its built-in paths. Its own settings live under
`options.tfidf` in the experiment file (`ngram_max`, `sublinear_tf`).
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer

from ablate.components.retrieval.stages import PATHS


@PATHS.register("tfidf", reads=("retrieval.depth", "options.tfidf"))
def tfidf(chunks, questions, cfg, res, latency):
    """Cosine similarity of TF-IDF vectors (l2-normalised, so a dot product)."""
    opts = cfg.options.get("tfidf", {})
    vec = TfidfVectorizer(ngram_range=(1, int(opts.get("ngram_max", 1))),
                          sublinear_tf=bool(opts.get("sublinear_tf", True)))
    ids = [c.chunk_id for c in chunks]
    matrix = vec.fit_transform([c.text for c in chunks])
    out = {}
    for q in questions:
        t0 = time.perf_counter()
        scores = (matrix @ vec.transform([q.question]).T).toarray().ravel()
        top = np.lexsort((np.asarray(ids), -scores))[: cfg.retrieval.depth]
        out[q.qid] = [(ids[i], float(scores[i])) for i in top if scores[i] > 0]
        if latency is not None:
            latency[q.qid] = time.perf_counter() - t0
    return out
