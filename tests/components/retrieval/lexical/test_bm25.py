"""BM25: parity with rank-bm25's BM25Okapi (scores within 1e-6, same top-K, ties by id),
on both search paths (numba kernel, numpy blocks)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from ablate.components.retrieval.lexical.analyzer import get_analyzer
from ablate.components.retrieval.lexical.bm25 import BM25Index
from tests.components.retrieval.lexical.bm25_paths import bm25_path  # noqa: F401 (fixture)
from tests.components.retrieval.retrieval_helpers import TEXTS, random_corpus


@pytest.fixture(autouse=True)
def _both_search_paths(bm25_path):  # noqa: F811
    """Every test here runs with the numba kernel (when installed) and with numpy."""


def _expected_top(ref_scores, ids, k):
    return sorted(range(len(ids)), key=lambda i: (-round(ref_scores[i], 9), ids[i]))[:k]


@pytest.mark.parametrize("seed,k1,b,eps", [(0, 1.5, 0.75, 0.25), (1, 1.2, 0.5, 0.1),
                                           (2, 0.9, 1.0, 0.0), (3, 2.0, 0.0, 0.5)])
def test_scores_and_topk_match_rank_bm25(seed, k1, b, eps):
    words, docs = random_corpus(seed, 300)
    ids = [f"c{(i * 7919) % 300:04d}" for i in range(300)]  # ids not in input order
    ref = BM25Okapi(docs, k1=k1, b=b, epsilon=eps)
    idx = BM25Index(ids, docs, k1=k1, b=b, epsilon=eps)
    pos = idx.positions(ids)
    rng = random.Random(seed)
    assert any(v < 0 for v in
               [np.log(300 - f + 0.5) - np.log(f + 0.5) for f in np.bincount(
                   [idx.vocab[w] for d in docs for w in set(d)])]), "fixture lacks negative idf"
    for _ in range(40):
        q = [rng.choice(words + ["unknown"]) for _ in range(rng.randint(1, 7))]
        with np.errstate(invalid="ignore"):
            # rank-bm25 gives NaN (0/0) for empty documents when b == 1; ours gives 0
            r = np.nan_to_num(ref.get_scores(q), nan=0.0)
        s = idx.scores(q)[pos]  # back to input order
        np.testing.assert_allclose(s, r, rtol=0, atol=1e-6)
        got = idx.search(q, 10)
        assert [d for d, _ in got] == [ids[i] for i in _expected_top(r, ids, 10)]
        assert [sc for _, sc in got] == sorted((sc for _, sc in got), reverse=True)


def test_real_text_parity_with_default_analyzer():
    an = get_analyzer("default")
    docs = [an(t) for t in TEXTS]
    ids = [f"c{i}" for i in range(len(TEXTS))]
    ref, idx = BM25Okapi(docs), BM25Index(ids, docs)
    for q in ["capital of France", "Rouen Rouen cathedral", "green plants light", "zzz"]:
        np.testing.assert_allclose(idx.scores(an(q)), ref.get_scores(an(q)), atol=1e-6)


def test_ties_broken_by_id_and_depth_is_exact():
    docs = [["a", "b"], ["a", "b"], ["c"], ["a", "b"], ["d"]]
    ids = ["z", "m", "x", "a", "b"]
    idx = BM25Index(ids, docs)
    top = idx.search(["a"], 2)
    assert [d for d, _ in top] == ["a", "m"]  # three equal scores: lowest ids first
    assert top[0][1] == top[1][1] > 0
    full = idx.search(["a"], 99)
    assert [d for d, _ in full] == ["a", "m", "z", "b", "x"]  # zero scores follow, by id


def test_epsilon_floor_for_negative_idf():
    docs = [["x", "y"], ["x"], ["x", "z"], ["w"]]  # x in 3/4 docs -> negative raw idf
    idx = BM25Index(["1", "2", "3", "4"], docs, epsilon=0.25)
    ref = BM25Okapi(docs, epsilon=0.25)
    assert idx.idf[idx.vocab["x"]] == pytest.approx(ref.idf["x"])
    assert ref.idf["x"] == pytest.approx(0.25 * ref.average_idf)


def test_repeated_query_terms_count_twice():
    docs = [["a", "b"], ["b", "c"], ["c"]]
    idx = BM25Index(["1", "2", "3"], docs)
    np.testing.assert_allclose(idx.scores(["b", "b"]), 2 * idx.scores(["b"]))


def test_rejects_duplicate_ids_and_handles_empty_docs():
    with pytest.raises(ValueError):
        BM25Index(["a", "a"], [["x"], ["y"]])
    idx = BM25Index(["a", "b"], [[], []])
    assert idx.search(["x"], 5) == [("a", 0.0), ("b", 0.0)]


def test_exact_arithmetic_ties_are_ties():
    """(w1 + w2) + w3 vs (w1 + w3) + w2 differ in the last bit without rounding."""
    a = ["x", "y", "y", "z", "z", "z"]
    b = ["x", "y", "y", "y", "z", "z"]  # same terms, tf of y and z swapped; equal idf
    docs = [a, b] + [[f"f{i}", "g"] for i in range(6)]
    ids = ["b", "a"] + [f"f{i:02d}" for i in range(6)]
    idx = BM25Index(ids, docs, k1=1.5, b=0.5)
    top = idx.search(["x", "y", "z"], 2)
    assert top[0][1] == top[1][1]
    assert [d for d, _ in top] == ["a", "b"]


ZH_TEXTS = [
    "向量检索的召回率怎么提升？可以调整 BM25 的参数 k1 和 b。",
    "知识图谱检索把实体和关系存进图数据库，再用向量检索补充召回。",
    "台北101是台灣最高的建築，高度為508公尺。",
    "混合检索（hybrid retrieval）结合 BM25 与稠密向量，用 RRF 融合排名。",
    "中文分词使用 jieba 的搜索引擎模式；全角字符ＢＭ２５会被折叠。",
    "東京タワーは東京都港区にある電波塔です。",
]


@pytest.mark.parametrize("name", ["zh", "cjk_bigram"])
def test_chinese_analyzers_parity_with_rank_bm25(name):
    an = get_analyzer(name)
    docs = an.batch(ZH_TEXTS)
    ids = [f"z{i}" for i in range(len(ZH_TEXTS))]
    ref, idx = BM25Okapi(docs), BM25Index(ids, docs)
    for q in ["向量检索的 recall 怎么提升", "BM25 参数", "台灣最高的建築", "知识图谱", "东京"]:
        toks = an(q)
        np.testing.assert_allclose(idx.scores(toks), ref.get_scores(toks), atol=1e-6)
        ref_scores = ref.get_scores(toks)
        assert [d for d, _ in idx.search(toks, 3)] == [ids[i] for i in _expected_top(ref_scores, ids, 3)]


def test_a_shard_scored_with_the_collection_equals_the_whole_index():
    """Each shard built with the merged CollectionStats scores its documents exactly as
    one index of the whole collection does (what sharded retrieval's exact merge needs);
    without them it does not (local idf and avgdl)."""
    from ablate.components.retrieval.lexical.bm25 import CollectionStats
    words, docs = random_corpus(5, 400)
    ids = [f"c{(i * 7919) % 400:04d}" for i in range(400)]
    whole = BM25Index(ids, iter(docs))  # read once, as an iterator
    cuts = [(0, 130), (130, 131), (131, 400)]
    stats = CollectionStats.merge([CollectionStats.of(docs[a:b]) for a, b in cuts])
    assert (stats.n_docs, stats.total_len) == (400, sum(map(len, docs)))
    rng = random.Random(5)
    queries = [[rng.choice(words) for _ in range(rng.randint(1, 6))] for _ in range(30)]
    local_differs = False
    for a, b in cuts:
        shard = BM25Index(ids[a:b], docs[a:b], collection=stats)
        alone = BM25Index(ids[a:b], docs[a:b])
        for q in queries:
            full = dict(whole.search(q, 400))
            got = shard.search(q, b - a)
            assert got == sorted(((d, full[d]) for d in ids[a:b]), key=lambda x: (-x[1], x[0]))
            local_differs |= alone.search(q, b - a) != got
    assert local_differs


def test_collection_stats_must_hold_every_term():
    from ablate.components.retrieval.lexical.bm25 import CollectionStats
    with pytest.raises(ValueError, match="'zz' is not in the collection"):
        BM25Index(["a"], [["x", "zz"]], collection=CollectionStats.of([["x"]]))
