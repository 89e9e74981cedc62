"""BM25Index.search_many: exactly `search` of each query (same ids, scores, order, ties),
on both paths (numba kernel, numpy blocks), whatever the block size."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ablate.components.retrieval.lexical import bm25 as bm25_mod
from ablate.components.retrieval.lexical import bm25_numba
from ablate.components.retrieval.lexical.analyzer import get_analyzer
from ablate.components.retrieval.lexical.bm25 import BM25Index
from tests.components.retrieval.lexical.bm25_paths import bm25_path  # noqa: F401 (fixture)
from tests.components.retrieval.retrieval_helpers import random_corpus

ZH = ["向量检索的召回率怎么提升？可以调整 BM25 的参数 k1 和 b。",
      "混合检索（hybrid retrieval）结合 BM25 与稠密向量，用 RRF 融合排名。",
      "台北101是台灣最高的建築，高度為508公尺。", "知识图谱检索把实体和关系存进图数据库。"]


def _brute(idx, query, k):
    """Top-k from the full rounded score vector: sorted by (-score, position)."""
    s = idx.scores(query)
    order = sorted(range(idx.n_docs), key=lambda i: (-s[i], i))[:k]
    return [(idx.ids[i], float(s[i])) for i in order]


def _corpus(seed, n_docs=120):
    """Random docs plus exact duplicates (heavy ties) and empty docs, ids out of order."""
    words, docs = random_corpus(seed, n_docs)
    rng = random.Random(seed)
    docs = docs + [list(rng.choice(docs)) for _ in range(n_docs // 2)] + [[], []]
    ids = [f"d{(i * 7919) % 1000:04d}" for i in range(len(docs))]
    return words, ids, docs


def _queries(words, seed, n=60):
    rng = random.Random(seed)
    qs = [[rng.choice(words) for _ in range(rng.randint(1, 8))] for _ in range(n)]
    qs += [[], ["unknown"], ["unknown", "nope"], [words[0]] * 3, words[:2] + ["unknown"]]
    rng.shuffle(qs)
    return qs


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [1, 5, 10, 500])  # 500 > n_docs
def test_equals_search_and_full_sort(bm25_path, seed, k):
    words, ids, docs = _corpus(seed)
    idx = BM25Index(ids, docs, epsilon=[0.25, 0.0, 0.5][seed])
    qs = _queries(words, seed)
    many = idx.search_many(qs, k)
    assert len(many) == len(qs)
    for q, got in zip(qs, many):
        assert got == _brute(idx, q, k)
        assert got == idx.search(q, k)
        assert len(got) == min(k, idx.n_docs)
    if k > 1:  # the duplicates make ties inside the top-k: broken by id
        assert any(a[1] == b[1] > 0 for got in many for a, b in zip(got, got[1:]))


@pytest.mark.parametrize("share", [0.0, 0.1, 2.0])  # every term dense, some, none
def test_dense_rows_and_postings_give_the_same_rankings(bm25_path, monkeypatch, share):
    monkeypatch.setattr(bm25_mod, "DENSE_SHARE", share)
    words, ids, docs = _corpus(3)
    idx = BM25Index(ids, docs)
    assert len(idx._dense) == {0.0: len(idx.vocab), 2.0: 0}.get(share, len(idx._dense))
    if share == 0.1:
        assert 0 < len(idx._dense) < len(idx.vocab), "fixture lacks dense and sparse terms"
    qs = _queries(words, 3)
    assert idx.search_many(qs, 7) == [_brute(idx, q, 7) for q in qs]


@pytest.mark.parametrize("block_queries", [1, 2, 3, 1000])
def test_block_boundaries_do_not_change_results(monkeypatch, block_queries):
    words, ids, docs = _corpus(4)
    idx = BM25Index(ids, docs)
    qs = _queries(words, 4)
    expected = [_brute(idx, q, 10) for q in qs]
    monkeypatch.setattr(bm25_mod.bm25_numba, "ENABLED", False)  # blocks are the numpy path's
    monkeypatch.setattr(BM25Index, "BLOCK_BYTES", 8 * idx.n_docs * block_queries)
    assert idx.search_many(qs, 10) == expected


def test_chinese_and_mixed_queries(bm25_path):
    an = get_analyzer("zh")
    docs = an.batch(ZH * 3)  # each text three times: ties
    ids = [f"z{i:02d}" for i in range(len(docs))]
    idx = BM25Index(ids, docs)
    qs = [an(q) for q in ["向量检索 recall 怎么提升", "BM25 参数", "台灣最高的建築", "知识图谱",
                          "东京", ""]]
    many = idx.search_many(qs, 4)
    assert many == [_brute(idx, q, 4) for q in qs]
    assert [d for d, _ in many[2]] == ["z02", "z06", "z10", "z00"] or many[2][0][1] > 0
    assert many[-1] == [(f"z{i:02d}", 0.0) for i in range(4)]  # empty query: ids in order


def test_edge_cases(bm25_path):
    assert BM25Index([], []).search_many([["a"], []], 5) == [[], []]
    idx = BM25Index(["c", "b", "a"], [["x", "y"], ["y"], ["z"]])
    assert idx.search_many([], 3) == []
    assert idx.search_many([["x"]], 0) == [[]]
    assert idx.search_many([["zzz"], []], 5) == [[("a", 0.0), ("b", 0.0), ("c", 0.0)]] * 2
    empty_docs = BM25Index(["b", "a"], [[], []])
    assert empty_docs.search_many([["x"]], 1) == [[("a", 0.0)]]
    top = idx.search_many([["x"], ["y", "y"]], 1)
    assert top[0][0][0] == "c" and top[1][0][0] == "b"  # y: the shorter doc "b" scores higher
    np.testing.assert_allclose(top[1][0][1], idx.scores(["y", "y"])[1])
    assert top[1][0][1] > 0


def test_kernel_only_for_large_batches(monkeypatch):
    """Below MIN_WORK query x document pairs search_many keeps to numpy (loading numba costs
    more than the work), unless the kernel is loaded already."""
    monkeypatch.setattr(bm25_numba, "ENABLED", True)
    monkeypatch.setattr(bm25_numba, "MIN_WORK", 1000)
    monkeypatch.setattr(bm25_numba, "_kernel", None)
    assert not bm25_numba.worth(10, 99)
    assert bm25_numba.worth(10, 100)
    monkeypatch.setattr(bm25_numba, "_kernel", object())
    assert bm25_numba.worth(1, 1)
    monkeypatch.setattr(bm25_numba, "ENABLED", False)
    assert not bm25_numba.worth(10**6, 10**6)
