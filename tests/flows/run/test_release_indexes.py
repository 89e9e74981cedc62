"""After the last stage the sweep drops its memoised BM25 indexes (the analysis reads
none); unloading models between stages keeps them."""

from __future__ import annotations

from types import SimpleNamespace

from ablate.components.contract.config import RetrievalConfig
from ablate.components.contract.records import Chunk
from ablate.components.retrieval.lexical import resources as indexes
from ablate.flows.run.stages import release_models

CHUNKS = [Chunk(f"d:{i}", "d", i, i + 1, text, 2) for i, text in
          enumerate(["alpha beta", "beta gamma", "gamma delta"])]
CFG = RetrievalConfig(paths=("bm25",), analyzer="default")


def test_indexes_released_only_after_the_stages():
    ctx = SimpleNamespace(memo={})
    first, _ = indexes.lexical(CHUNKS, CFG)
    assert indexes.lexical(CHUNKS, CFG)[0] is first  # memoised
    release_models(ctx)  # between stages: models only
    assert indexes.lexical(CHUNKS, CFG)[0] is first
    release_models(ctx, indexes=True)  # after the last stage
    again, _ = indexes.lexical(CHUNKS, CFG)
    assert again is not first and again.search(["beta"], 3) == first.search(["beta"], 3)
