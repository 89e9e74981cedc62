"""BM25 variants: Lucene's BM25Similarity to the float32 bit, SmallFloat's one-byte lengths,
BM25+ and BM25L by their published formulas, and okapi left as it was."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from ablate.components.contract.config import PipelineConfig
from ablate.components.retrieval.lexical import bm25_variants as bv
from ablate.components.retrieval.lexical.bm25 import BM25Index
from ablate.components.retrieval.lexical.bm25_stats import CollectionStats


def f32(x: float) -> float:
    """x rounded to the nearest float32 (as Java's float arithmetic rounds every step)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def test_smallfloat_table_matches_lucene_constants():
    # NUM_FREE_VALUES = 255 - longToInt4(Integer.MAX_VALUE) = 255 - 231
    assert bv.NUM_FREE_VALUES == 24
    # exact up to 39 (BM25Similarity explains norms above 39 as "approximate")
    assert [bv.byte4_to_int(bv.int_to_byte4(i)) for i in range(40)] == list(range(40))
    # then 4 significant bits, rounded down: 40 -> 40, 41 -> 40, 42 -> 42, 100 -> 96
    assert bv.byte4_to_int(bv.int_to_byte4(41)) == 40
    assert bv.byte4_to_int(bv.int_to_byte4(42)) == 42
    assert bv.byte4_to_int(bv.int_to_byte4(100)) == 96
    assert bv.int_to_byte4(2**31 - 1) == 255
    assert bv.LENGTH_TABLE[255] == bv.byte4_to_int(255)
    lengths = np.array([0, 1, 23, 24, 39, 40, 41, 100, 1000, 123456, 2**31 - 1])
    assert bv.encode_lengths(lengths).tolist() == [bv.int_to_byte4(int(x)) for x in lengths]
    # the encoding is monotone and every decoded value encodes to itself
    assert all(bv.int_to_byte4(bv.byte4_to_int(i)) == i for i in range(256))


def _lucene_by_hand(tf: int, dl: int, df: int, n: int, total: int, k1: float, b: float) -> float:
    """BM25Similarity's score of one term, every float step rounded as Java does."""
    idf = f32(math.log(1 + (n - df + 0.5) / (df + 0.5)))
    avgdl = f32(total / n)
    k1, b = f32(k1), f32(b)
    length = float(bv.byte4_to_int(bv.int_to_byte4(dl)))
    norm = f32(1.0 / f32(k1 * f32(f32(1 - b) + f32(f32(b * length) / avgdl))))
    return f32(idf - f32(idf / f32(1.0 + f32(tf * norm))))


def test_lucene_scores_equal_bm25similarity_by_hand():
    # document "a" is 41 tokens long: Lucene scores it as 40 tokens
    docs = {"a": ["x"] * 3 + ["y"] * 38, "b": ["y"] * 5, "c": ["z", "y"], "d": ["w"] * 7}
    ids = list(docs)
    total = sum(len(t) for t in docs.values())
    index = BM25Index(ids, [docs[i] for i in ids], k1=0.9, b=0.4, variant="lucene")
    got = dict(zip(index.ids, index.scores(["x"]).tolist()))
    assert got["a"] == _lucene_by_hand(3, 41, 1, 4, total, 0.9, 0.4)
    assert got["b"] == got["c"] == got["d"] == 0.0
    # two terms: the double sum of the float scores, cast to float
    both = dict(zip(index.ids, index.scores(["y", "z"]).tolist()))
    y_c = _lucene_by_hand(1, 2, 3, 4, total, 0.9, 0.4)
    z_c = _lucene_by_hand(1, 2, 1, 4, total, 0.9, 0.4)
    assert both["c"] == f32(y_c + z_c)
    assert both["b"] == _lucene_by_hand(5, 5, 3, 4, total, 0.9, 0.4)
    # no (k1 + 1): one occurrence in an average-length document scores idf / (1 + k1)
    # up to float rounding, and never more than idf
    assert both["b"] < f32(math.log(1 + (4 - 3 + 0.5) / 3.5))


def test_lucene_length_norm_uses_the_decoded_byte():
    # 41 and 40 tokens share one byte, so the same tf scores the same in Lucene
    docs = [["x"] + ["y"] * 40, ["x"] + ["y"] * 39, ["q"] * 3]
    index = BM25Index(["a", "b", "c"], docs, k1=1.2, b=0.75, variant="lucene")
    s = dict(zip(index.ids, index.scores(["x"]).tolist()))
    assert s["a"] == s["b"] > 0
    okapi = BM25Index(["a", "b", "c"], docs, k1=1.2, b=0.75)
    o = dict(zip(okapi.ids, okapi.scores(["x"]).tolist()))
    assert o["a"] != o["b"]


def test_lucene_search_ranks_by_float32_score_then_id():
    docs = [["x", "y"], ["y", "x"], ["x"], ["y"] * 3, ["z"]]
    index = BM25Index(["e", "d", "c", "b", "a"], docs, variant="lucene", k1=0.9, b=0.4)
    ranked = index.search(["x", "y"], 5)
    assert [d for d, _ in ranked][:2] == ["d", "e"]  # equal scores: ids ascending
    assert all(s == f32(s) for _, s in ranked)
    assert index.search_many([["x", "y"], ["z"]], 3) == [ranked[:3], index.search(["z"], 3)]


def test_lucene_with_collection_statistics_equals_one_index():
    docs = [["a", "b", "c"], ["a", "a"], ["c"] * 30, ["b", "d"]]
    ids = ["w", "x", "y", "z"]
    whole = BM25Index(ids, docs, variant="lucene", k1=0.9, b=0.4)
    stats = CollectionStats.of(docs)
    part = BM25Index(ids[:2], docs[:2], variant="lucene", k1=0.9, b=0.4, collection=stats)
    q = ["a", "c"]
    assert part.scores(q).tolist() == whole.scores(q)[:2].tolist()


def test_bm25plus_and_bm25l_follow_lv_and_zhai():
    docs = [["x", "x", "y"], ["y", "z"], ["z", "z", "z", "z"]]
    n, total, k1, b = 3, 9, 1.2, 0.75
    avgdl = total / n
    plus = BM25Index(["a", "b", "c"], docs, k1=k1, b=b, variant="bm25plus")
    idf = math.log((n + 1) / 1)
    norm = 1 - b + b * 3 / avgdl
    expect = idf * (2 * (k1 + 1) / (2 + k1 * norm) + 1.0)
    assert plus.raw_scores(["x"])[0] == pytest.approx(expect, rel=1e-12)
    assert plus.raw_scores(["x"])[1] == 0.0  # delta only where the term occurs
    bl = BM25Index(["a", "b", "c"], docs, k1=k1, b=b, variant="bm25l", delta=0.25)
    c = 2 / norm
    expect_l = math.log((n + 1) / 1.5) * (k1 + 1) * (c + 0.25) / (k1 + c + 0.25)
    assert bl.raw_scores(["x"])[0] == pytest.approx(expect_l, rel=1e-12)


def test_okapi_is_unchanged_and_keeps_its_config_dump():
    docs = [["x", "y"], ["y"], ["z", "x", "x"]]
    a = BM25Index(["a", "b", "c"], docs)
    b = BM25Index(["a", "b", "c"], docs, variant="okapi", delta=3.0)
    assert a.raw_scores(["x", "y"]).tolist() == b.raw_scores(["x", "y"]).tolist()
    dumped = PipelineConfig().model_dump(mode="json")["retrieval"]["bm25"]
    assert dumped == {"k1": 1.5, "b": 0.75, "epsilon": 0.25}  # stage keys as before
    lucene = PipelineConfig.model_validate({"retrieval": {"bm25": {"variant": "lucene"}}})
    assert lucene.model_dump(mode="json")["retrieval"]["bm25"]["variant"] == "lucene"
    with pytest.raises(ValueError):
        PipelineConfig.model_validate({"retrieval": {"bm25": {"variant": "tfidf"}}})


def test_lucene_numba_kernel_equals_numpy_path(monkeypatch):
    from ablate.components.retrieval.lexical import bm25_numba
    if not bm25_numba.ENABLED:
        pytest.skip("numba not installed")
    rnd = np.random.default_rng(3)
    words = [f"w{i}" for i in range(40)]
    docs = [list(rnd.choice(words, size=int(rnd.integers(1, 60)))) for _ in range(300)]
    ids = [f"d{i:03d}" for i in range(300)]
    index = BM25Index(ids, docs, k1=0.9, b=0.4, variant="lucene")
    queries = [list(rnd.choice(words, size=int(rnd.integers(1, 6)))) for _ in range(30)]
    monkeypatch.setattr(bm25_numba, "ENABLED", False)
    by_numpy = index.search_many(queries, 50)
    monkeypatch.setattr(bm25_numba, "ENABLED", True)
    monkeypatch.setattr(bm25_numba, "MIN_WORK", 0)
    assert index.search_many(queries, 50) == by_numpy
    assert all(s == f32(s) for r in by_numpy for _, s in r)


def test_float32_topk_rows_equals_casting_every_score():
    from ablate.components.retrieval.topk import topk_by_position, topk_rows
    rnd = np.random.default_rng(5)
    # values a float32 step apart and exact float32 ties: the threshold must keep them
    base = rnd.choice(np.arange(1, 40, dtype=np.float64) / 7.0, size=(6, 500))
    scores = base + rnd.integers(0, 3, size=base.shape) * 1e-8
    for k in (1, 10, 50, 499):
        pos, vals = topk_rows(scores, k, None, f32=True)
        for r in range(scores.shape[0]):
            want = topk_by_position(scores[r].astype(np.float32).astype(np.float64), k)
            assert pos[r].tolist() == want[0].tolist() and vals[r].tolist() == want[1].tolist()


def test_lucene_index_on_disk_scores_as_lucene(tmp_path):
    from ablate.components.retrieval.lexical import bm25_disk
    docs = [["x", "y"], ["y", "x"], ["x"] * 45, ["y"] * 3, ["z"]]
    index = BM25Index(["e", "d", "c", "b", "a"], docs, variant="lucene", k1=0.9, b=0.4)
    bm25_disk.save(index, tmp_path / "ix")
    back = bm25_disk.load(tmp_path / "ix")
    assert back is not None and back.variant == "lucene"
    assert back.search_many([["x", "y"], ["x"]], 4) == index.search_many([["x", "y"], ["x"]], 4)
