"""Composite rerank on hand-computed cases; weight validation; depth; method none."""

from __future__ import annotations

import numpy as np
import pytest
from retrieval_helpers import FakeEncoder, make_chunks, make_questions

from ablate.components.contract.config import PipelineConfig, RerankConfig, RetrievalConfig
from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Chunk, Question
from ablate.components.retrieval.rerank import check_weights
from ablate.components.retrieval.resources import Resources
from ablate.components.retrieval.stages import rerank_rankings

RCFG = RetrievalConfig(paths=("bm25",))


def _chunk(cid, doc, text):
    return Chunk(cid, doc, 0, len(text), text, len(text.split()))


CHUNKS = [_chunk("a", "d1", "alpha"), _chunk("b", "d2", "beta"), _chunk("c", "d3", "gamma"),
          _chunk("e", "d1", "epsilon")]
Q = Question("q", "query", ("x",), True)
FUSED = {"q": [("a", 0.9), ("b", 0.5), ("c", 0.1), ("e", 0.05)]}


def test_fusion_and_source_hand_computed():
    cfg = RerankConfig(method="composite", depth=3, weights={"fusion": 0.3, "source": 0.7},
                       default_credibility=0.2)
    cred = {"d1": 0.0, "d2": 1.0}  # d3 missing -> default 0.2
    out = rerank_rankings([Q], CHUNKS, FUSED, PipelineConfig(retrieval=RCFG, rerank=cfg), Resources(), cred)["q"]
    # fusion minmax over top 3: a 1, b 0.5, c 0 ; source: a 0, b 1, c 0.2
    exp = {"a": 0.3, "b": 0.3 * 0.5 + 0.7, "c": 0.7 * 0.2}
    assert [d for d, _ in out] == ["b", "a", "c", "e"]
    for d, s in out[:3]:
        assert s == pytest.approx(exp[d])
    assert out[3] == ("e", 0.05)  # beyond depth: kept after, fused score


def test_seed_weighting_semantic_fusion_source():
    """The seeds' 0.6 model / 0.3 base / 0.1 source, with a fake bi-encoder."""
    table = {"query": [1, 0, 0, 0], "alpha": [0, 1, 0, 0], "beta": [1, 1, 0, 0],
             "gamma": [1, 0, 0, 0], "epsilon": [0, 0, 1, 0]}
    enc = FakeEncoder({k: np.array(v, float) for k, v in table.items()})
    cfg = RerankConfig(method="composite", depth=4,
                       weights={"semantic": 0.6, "fusion": 0.3, "source": 0.1})
    out = dict(rerank_rankings([Q], CHUNKS, FUSED, PipelineConfig(retrieval=RCFG, rerank=cfg), Resources.fixed(enc), {"d1": 1.0})["q"])
    fus = {"a": 1.0, "b": (0.5 - 0.05) / 0.85, "c": (0.1 - 0.05) / 0.85, "e": 0.0}
    sem = {"a": 0.0, "b": 2 ** -0.5, "c": 1.0, "e": 0.0}
    src = {"a": 1.0, "b": 0.5, "c": 0.5, "e": 1.0}
    for d in "abce":
        assert out[d] == pytest.approx(0.6 * sem[d] + 0.3 * fus[d] + 0.1 * src[d], abs=1e-6)


def test_lexical_signal_is_normalised_bm25():
    chunks = make_chunks()
    q = make_questions(["capital Rouen"])[0]
    fused = {q.qid: [(c.chunk_id, 1.0) for c in chunks]}  # all tied on fusion
    cfg = RerankConfig(method="composite", depth=len(chunks), weights={"lexical": 1.0})
    out = rerank_rankings([q], chunks, fused, PipelineConfig(retrieval=RCFG, rerank=cfg), Resources(), {})[q.qid]
    scores = dict(out)
    assert max(scores.values()) == pytest.approx(1.0) and min(scores.values()) == pytest.approx(0.0)
    assert out[0][0] == "c001"  # "Normandy ... its capital is Rouen": both terms


def test_method_none_returns_fused_unchanged():
    out = rerank_rankings([Q], CHUNKS, FUSED, PipelineConfig(retrieval=RCFG, rerank=RerankConfig()), Resources(), {})
    assert out == FUSED and out["q"] is not FUSED["q"]


def test_weight_validation():
    with pytest.raises(InputError, match="rerank.weights"):
        check_weights(RerankConfig(method="composite", weights={"popularity": 1.0}))
    with pytest.raises(InputError, match="cross_encoder"):
        check_weights(RerankConfig(method="composite", weights={"cross_encoder": 0.6, "fusion": 0.4}))
    with pytest.raises(ValueError):  # the config itself refuses negatives and all zeros
        RerankConfig(weights={"fusion": -1.0})
    with pytest.raises(ValueError):
        RerankConfig(weights={"fusion": 0.0, "source": 0.0})
    assert check_weights(RerankConfig(weights={"fusion": 1.0, "source": 0.0})) == {"fusion": 1.0}


def test_missing_cross_encoder_dir_is_input_error(tmp_path):
    cfg = RerankConfig(method="composite", weights={"cross_encoder": 1.0},
                       cross_encoder=str(tmp_path / "nope"))
    with pytest.raises(InputError, match="rerank.cross_encoder"):
        rerank_rankings([Q], CHUNKS, FUSED, PipelineConfig(retrieval=RCFG, rerank=cfg), Resources(), {})


def test_unknown_method_is_input_error():
    with pytest.raises(InputError, match="unknown reranker"):
        rerank_rankings([Q], CHUNKS, FUSED, PipelineConfig(retrieval=RCFG, rerank=RerankConfig(method="llm")), Resources(), {})


def test_depth_limits_reranking():
    cfg = RerankConfig(method="composite", depth=1, weights={"source": 1.0})
    out = rerank_rankings([Q], CHUNKS, FUSED, PipelineConfig(retrieval=RCFG, rerank=cfg), Resources(), {"d2": 1.0})["q"]
    assert [d for d, _ in out] == ["a", "b", "c", "e"]  # only "a" re-scored

