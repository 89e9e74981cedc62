"""One answer to "does this variant run the dense embedder" (issue 43.2), for the manifest
(chunk window statistics, English-only model warnings) and the resolved models: a
semantic signal with weight 0 is not computed (rerank.check_weights), nor are signals
under the `none` reranker."""

from __future__ import annotations

import pytest

from ablate.components.contract.config import PipelineConfig
from ablate.components.model_identity import resolved_models, uses_embedder
from ablate.flows.outputs.manifest import reads_embedder


@pytest.mark.parametrize("fields, runs", [
    ({"retrieval": {"paths": ["bm25", "dense"]}}, True),
    ({"retrieval": {"paths": ["bm25"]}}, False),
    ({"retrieval": {"paths": ["bm25"]},
      "rerank": {"method": "composite", "weights": {"semantic": 1.0}}}, True),
    ({"retrieval": {"paths": ["bm25"]},  # a zero weight: the signal is never computed
      "rerank": {"method": "composite", "weights": {"semantic": 0.0, "fusion": 1.0}}}, False),
    ({"retrieval": {"paths": ["bm25"]},  # `none` computes no signal
      "rerank": {"method": "none", "weights": {"semantic": 1.0}}}, False),
])
def test_the_manifest_and_the_resolved_models_agree(fields, runs):
    cfg = PipelineConfig(**fields)
    assert uses_embedder(cfg) is runs
    assert reads_embedder(cfg) is runs
    assert ("embedder" in resolved_models(cfg)) is runs
