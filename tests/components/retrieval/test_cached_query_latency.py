"""Latency is the latency of the computation: query vectors served by the embedding cache
count the encode seconds recorded when they were computed, so the same questions give the
same latency whether the cache was cold or warm, and the reuse is marked. A fake clock
(tests/clock_fakes.py) makes every figure exact."""

from __future__ import annotations

import math

import numpy as np
import pytest
from retrieval_helpers import make_chunks, make_questions

from ablate.components.contract.config import FusionConfig, PipelineConfig, RerankConfig, RetrievalConfig
from ablate.components.retrieval.dense.embed_cache import EmbeddingCache, text_key
from ablate.components.retrieval.dense.encoder import DenseEncoder
from ablate.components.retrieval.resources import Resources
from ablate.components.retrieval.stages import fuse_rankings, rerank_rankings, retrieve_path
from ablate.components.runtime.models import minilm_path
from tests.clock_fakes import ClockedModel, FakeClock, use_clock

PER_TEXT = 0.5  # seconds of the fake model per text


@pytest.fixture()
def clock(monkeypatch):
    c = FakeClock()
    use_clock(monkeypatch, c)
    return c


def _encoder(cache_dir, clock, per_text=PER_TEXT):
    enc = DenseEncoder(minilm_path(), cache_dir)
    enc._model = ClockedModel(clock, per_text)
    return enc


def _cfg(paths=("dense",), rerank=RerankConfig()):
    return PipelineConfig(retrieval=RetrievalConfig(paths=paths, depth=4), fusion=FusionConfig(),
                          rerank=rerank)


def test_dense_latency_is_the_same_cold_or_warm(tmp_path, clock):
    """The symptom: a variant whose query vectors were cached reported only the search."""
    chunks, qs = make_chunks(), make_questions()
    cold: dict[str, float] = {}
    retrieve_path("dense", chunks, qs, _cfg(), Resources.fixed(_encoder(tmp_path, clock)),
                  latency=cold)
    warm_encoder = _encoder(tmp_path, clock)
    warm: dict[str, float] = {}
    retrieve_path("dense", chunks, qs, _cfg(), Resources.fixed(warm_encoder), latency=warm)
    assert warm_encoder._model.calls == 0  # every vector came from the cache
    assert cold == warm == {q.qid: PER_TEXT for q in qs}  # encode + search (0 on this clock)


def test_dense_marks_the_questions_whose_seconds_were_recorded(tmp_path, clock):
    from ablate.components.retrieval.latency import StageSeconds
    chunks, qs = make_chunks(), make_questions()
    cold = StageSeconds()
    retrieve_path("dense", chunks, qs, _cfg(), Resources.fixed(_encoder(tmp_path, clock)),
                  latency=cold)
    assert cold.reused == set()
    more = make_questions(("A question never asked before?", qs[0].question))
    warm = StageSeconds()
    retrieve_path("dense", chunks, more, _cfg(), Resources.fixed(_encoder(tmp_path, clock)),
                  latency=warm)
    assert warm.reused == {"q1"} and warm == {"q0": PER_TEXT, "q1": PER_TEXT}


def test_semantic_rerank_latency_is_the_same_cold_or_warm(tmp_path, clock):
    """The semantic signal's online cost is the question's encoding (recorded or timed now)
    and the scoring; the candidates' vectors are index work, not counted."""
    from ablate.components.retrieval.latency import StageSeconds
    chunks, qs = make_chunks(), make_questions()
    rr = RerankConfig(method="composite", depth=3, weights={"semantic": 1.0})
    cfg = _cfg(("bm25",), rr)
    fused = fuse_rankings({"bm25": retrieve_path("bm25", chunks, qs, cfg)}, cfg)
    runs = []
    for _ in range(2):
        enc = _encoder(tmp_path, clock)
        lat = StageSeconds()
        out = rerank_rankings(qs, chunks, fused, cfg, Resources.fixed(enc), {}, latency=lat)
        runs.append((out, lat, enc._model.calls))
    (out1, cold, calls1), (out2, warm, calls2) = runs
    assert calls1 > 0 and calls2 == 0 and out1 == out2
    assert cold == warm == {q.qid: PER_TEXT for q in qs}
    assert cold.reused == set() and warm.reused == {q.qid for q in qs}


def test_cache_records_seconds_beside_vectors(tmp_path):
    keys = [text_key("x"), text_key("y")]
    EmbeddingCache(tmp_path, "m").store(keys, np.eye(2, dtype=np.float32), seconds=[0.5, 0.25])
    got = EmbeddingCache(tmp_path, "m").lookup_timed(keys + [text_key("z")])
    assert [s for _, s in got[:2]] == [0.5, 0.25] and got[2] is None
    np.testing.assert_array_equal(got[1][0], [0.0, 1.0])


def test_an_entry_without_recorded_seconds_is_timed_again_keeping_its_vector(tmp_path, clock):
    """A shard written before seconds were recorded (keys and vectors only) serves its
    vectors as before; a timed lookup never counts its time as 0: the text is embedded
    again for its seconds, which are stored, and the cached vector is kept."""
    enc = _encoder(tmp_path, clock)
    old = np.asarray([[0.6, 0.8] + [0.0] * 6], dtype=np.float32)
    np.savez(enc.cache.dir / "shard-old.npz", keys=np.asarray([text_key("q")], dtype="U64"),
             vecs=old)
    (_, s), = EmbeddingCache(tmp_path, enc.model_id).lookup_timed([text_key("q")])
    assert math.isnan(s)
    assert enc._model.calls == 0
    np.testing.assert_array_equal(enc.encode(["q"]), old)  # untimed: no model call
    assert enc._model.calls == 0
    timed = enc.encode_timed(["q"])
    assert enc._model.calls == 1 and timed.seconds.tolist() == [PER_TEXT]
    assert timed.reused.tolist() == [False]
    np.testing.assert_array_equal(timed.vectors, old)
    fresh = _encoder(tmp_path, clock)
    again = fresh.encode_timed(["q"])
    assert fresh._model.calls == 0 and again.seconds.tolist() == [PER_TEXT]
    assert again.reused.tolist() == [True]
    np.testing.assert_array_equal(again.vectors, old)


def test_encode_timed_splits_each_model_call_over_its_texts(tmp_path, clock):
    enc = _encoder(tmp_path, clock)
    enc.progress_slice = 2  # one model call per 2 texts
    timed = enc.encode_timed(["a", "b", "c", "a"])
    assert timed.seconds.tolist() == [PER_TEXT] * 4  # "a" repeated: embedded once
    assert timed.reused.tolist() == [False] * 4
    assert enc._model.texts == ["a", "b", "c"]
    later = _encoder(tmp_path, clock).encode_timed(["c", "d"])
    assert later.seconds.tolist() == [PER_TEXT, PER_TEXT] and later.reused.tolist() == [True, False]
