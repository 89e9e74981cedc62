"""Stage API: retrieve_path / fuse_rankings / rerank_rankings, and the demo sweep axes."""

from __future__ import annotations

import numpy as np
import pytest
from rank_bm25 import BM25Okapi
from retrieval_helpers import TEXTS, make_chunks, make_questions

from ablate.components.contract.config import FusionConfig, PipelineConfig, RerankConfig, RetrievalConfig
from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Chunk
from ablate.components.retrieval.dense.encoder import DenseEncoder
from ablate.components.retrieval.lexical.analyzer import get_analyzer
from ablate.components.retrieval.lexical.bm25 import BM25Index
from ablate.components.retrieval.resources import Resources
from ablate.components.retrieval.stages import fuse_rankings, rerank_rankings, retrieve_path
from ablate.components.runtime.models import minilm_path


def P(retrieval=RetrievalConfig(), fusion=FusionConfig(), rerank=RerankConfig()) -> PipelineConfig:
    """A pipeline config from its retrieval, fusion and rerank sections."""
    return PipelineConfig(retrieval=retrieval, fusion=fusion, rerank=rerank)


R = Resources.fixed


DOCS = {f"d{i}": " ".join(TEXTS[2 * i: 2 * i + 2]) for i in range(4)}


@pytest.fixture(scope="module")
def model():
    return DenseEncoder(minilm_path(), None).model


@pytest.fixture()
def encoder(tmp_path, model):
    enc = DenseEncoder(minilm_path(), tmp_path / "emb")
    enc._model = model
    return enc


def window_chunks(size: int) -> list[Chunk]:
    """Word windows of `size` words over DOCS, with exact offsets (a tiny chunker)."""
    out = []
    for doc_id, text in DOCS.items():
        words, pos = text.split(" "), 0
        starts = []
        for w in words:
            starts.append(pos)
            pos += len(w) + 1
        for j in range(0, len(words), size):
            s = starts[j]
            e = starts[min(j + size, len(words)) - 1] + len(words[min(j + size, len(words)) - 1])
            out.append(Chunk(f"{doc_id}:{s}-{e}", doc_id, s, e, text[s:e], e - s))
    return out


def _check_ranking(r, chunk_ids, depth):
    assert len(r) == min(depth, len(chunk_ids))
    assert {d for d, _ in r} <= set(chunk_ids)
    keys = [(-s, d) for d, s in r]
    assert keys == sorted(keys)


def test_bm25_path_matches_rank_bm25_top_k():
    chunks, qs = make_chunks(), make_questions()
    an = get_analyzer("english")
    ref = BM25Okapi([an(c.text) for c in chunks], k1=1.2, b=0.6)
    cfg = RetrievalConfig(paths=("bm25",), depth=4, analyzer="english",
                          bm25={"k1": 1.2, "b": 0.6})
    out = retrieve_path("bm25", chunks, qs, P(cfg))
    for q in qs:
        s = ref.get_scores(an(q.question))
        exp = sorted(range(len(chunks)), key=lambda i: (-round(s[i], 9), chunks[i].chunk_id))[:4]
        assert [d for d, _ in out[q.qid]] == [chunks[i].chunk_id for i in exp]
        np.testing.assert_allclose([v for _, v in out[q.qid]], s[exp], atol=1e-6)


def test_bm25_path_searches_the_questions_together():
    """One search_many call for all questions; latency: that batch's time split evenly."""
    chunks, qs = make_chunks(), make_questions()
    cfg = RetrievalConfig(paths=("bm25",), depth=3, analyzer="english")
    lat: dict[str, float] = {}
    out = retrieve_path("bm25", chunks, qs, P(cfg), latency=lat)
    an = get_analyzer("english")
    index = BM25Index([c.chunk_id for c in chunks], [an(c.text) for c in chunks])
    assert out == {q.qid: index.search(an(q.question), 3) for q in qs}
    assert set(lat) == {q.qid for q in qs}
    assert len(set(lat.values())) == 1 and next(iter(lat.values())) > 0


def test_dense_path_finds_the_semantic_match(encoder):
    chunks, qs = make_chunks(), make_questions()
    out = retrieve_path("dense", chunks, qs, P(RetrievalConfig(depth=3)), R(encoder))
    assert out["q1"][0][0] == "c007"  # "What makes plants green?" -> chlorophyll
    assert out["q2"][0][0] == "c005"  # "Which river flows through Paris?" -> the Seine


def test_unknown_path_and_analyzer_are_input_errors():
    with pytest.raises(InputError, match="retrieval path"):
        retrieve_path("splade", make_chunks(), make_questions(), P())
    with pytest.raises(InputError, match="retrieval.analyzer"):
        retrieve_path("bm25", make_chunks(), make_questions(), P(RetrievalConfig(analyzer="x")))


def _pipeline(chunks, qs, rcfg, fcfg, kcfg, encoder):
    cfg = P(rcfg, fcfg, kcfg)
    per = {p: retrieve_path(p, chunks, qs, cfg, R(encoder)) for p in rcfg.paths}
    fused = fuse_rankings(per, cfg)
    return per, fused, rerank_rankings(qs, chunks, fused, cfg, R(encoder), {"d0": 0.9})


def test_sweep_axes_change_results(encoder):
    """The demo sweep varies paths, RRF k, rerank weights and chunk size."""
    qs = make_questions()
    chunks = window_chunks(8)
    base_r, base_f = RetrievalConfig(depth=6), FusionConfig(rrf_k=60)
    base_k = RerankConfig(method="composite", depth=6, weights={"fusion": 1.0})
    per, fused, reranked = _pipeline(chunks, qs, base_r, base_f, base_k, encoder)

    # paths: a single path passes through; the pair fuses both
    only_bm25 = _pipeline(chunks, qs, RetrievalConfig(paths=("bm25",), depth=6), base_f,
                          base_k, encoder)[1]
    assert only_bm25 == per["bm25"] and only_bm25 != fused
    # RRF k: scores change (and the stage reads nothing else)
    fused_k1 = fuse_rankings(per, P(base_r, FusionConfig(rrf_k=1)))
    assert fused_k1 != fused and {q: {d for d, _ in r} for q, r in fused_k1.items()} == \
        {q: {d for d, _ in r} for q, r in fused.items()}
    # rerank weights: credibility-heavy weighting reorders
    k2 = RerankConfig(method="composite", depth=6, weights={"fusion": 0.3, "source": 0.7})
    rr2 = rerank_rankings(qs, chunks, fused, P(base_r, base_f, k2), R(encoder), {"d0": 0.9})
    assert rr2 != reranked
    # chunk size: new chunks; only never-seen texts are embedded, a re-run embeds nothing
    before = encoder.counters["embedded"]
    chunks16 = window_chunks(16)
    new_texts = {c.text for c in chunks16} - {c.text for c in chunks}
    out16 = retrieve_path("dense", chunks16, qs, P(base_r), R(encoder))
    assert encoder.counters["embedded"] - before == len(new_texts) > 0
    assert {d for r in out16.values() for d, _ in r} <= {c.chunk_id for c in chunks16}
    fresh = DenseEncoder(minilm_path(), encoder.cache.dir.parent)
    assert retrieve_path("dense", chunks16, qs, P(base_r), R(fresh)) == out16
    assert fresh.counters["embedded"] == 0


def test_rerank_latency_per_question(encoder):
    chunks, qs = make_chunks(), make_questions()
    rcfg = RetrievalConfig(depth=4)
    fused = fuse_rankings({p: retrieve_path(p, chunks, qs, P(rcfg), R(encoder)) for p in rcfg.paths},
                          P(rcfg))
    lat: dict[str, float] = {}
    cfg = RerankConfig(method="composite", depth=3,
                       weights={"semantic": 0.6, "fusion": 0.3, "source": 0.1})
    out = rerank_rankings(qs, chunks, fused, P(rcfg, FusionConfig(), cfg), R(encoder), {}, latency=lat)
    assert set(lat) == set(out) == {q.qid for q in qs}
    for qid, r in out.items():
        assert {d for d, _ in r} == {d for d, _ in fused[qid]}  # same candidates, new order
        assert r[3:] == fused[qid][3:]
