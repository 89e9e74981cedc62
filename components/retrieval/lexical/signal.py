"""The `lexical` rerank signal (retrieval/rerank.py's SIGNALS): BM25 of question vs chunk
(corpus-wide idf, the index the bm25 path uses: lexical/resources.py), min-max normalised
over the candidates."""

from __future__ import annotations

import numpy as np

from ablate.components.contract.records import Chunk, Question
from ablate.components.retrieval.fusion import minmax
from ablate.components.retrieval.lexical import resources as lexical_resources
from ablate.components.retrieval.lexical.analyzer import Analyzer
from ablate.components.retrieval.lexical.bm25 import BM25Index
from ablate.components.retrieval.rerank import SIGNALS, SignalContext


@SIGNALS.register("lexical", reads=("retrieval.bm25",), uses={"retrieval.analyzer": "analyzer"})
def lexical(ctx: SignalContext, q: Question, cands: list[Chunk], fused: np.ndarray) -> np.ndarray:
    found: tuple[BM25Index, Analyzer] | None = ctx._cache.get("bm25")
    if found is None:
        found = ctx._cache["bm25"] = lexical_resources.lexical(ctx.chunks, ctx.cfg.retrieval,
                                                               ctx.res.index_dir)
    index, analyzer = found
    query = analyzer(q.question)
    return minmax(index.scores_for(query, [c.chunk_id for c in cands]))
