"""Sharded retrieval's pure parts: contiguous shards, the exact merge of per-shard top-k
(ties across shards broken by chunk id), BM25 shards scoring with the collection's
statistics and dense scores that do not depend on which vectors share a matrix product."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ablate.components.retrieval.dense import encoder as dense
from ablate.components.retrieval.dense.encoder import DenseIndex, exact_scores
from ablate.components.retrieval.lexical.analyzer import get_analyzer
from ablate.components.retrieval.lexical.bm25 import BM25Index, CollectionStats
from ablate.components.retrieval.lexical.sharding import AnalysedShard
from ablate.components.retrieval.shards import merge_rankings, merge_shards, shard_bounds


@pytest.mark.parametrize("n,s", [(10, 1), (10, 3), (10, 10), (7, 20), (0, 4), (1000, 7)])
def test_shard_bounds_cover_contiguously(n, s):
    b = shard_bounds(n, s)
    assert len(b) == max(1, min(s, n))
    assert b[0][0] == 0 and b[-1][1] == n
    assert all(hi == lo2 for (_, hi), (lo2, _) in zip(b, b[1:]))
    sizes = [hi - lo for lo, hi in b]
    assert max(sizes) - min(sizes) <= 1 and (n == 0 or min(sizes) >= 1)


def _top(items, k):
    return sorted(items, key=lambda x: (-x[1], x[0]))[:k]


@pytest.mark.parametrize("seed", range(200))
def test_merge_of_shard_topk_is_the_global_topk_with_ties_across_shards(seed):
    """Property: scores drawn from a few values (so ties fall across shard borders), any
    split of the items (contiguous in id order or scattered), each shard's top k by (score
    desc, id asc); the merge is the global top k, in that order."""
    rng = random.Random(seed)
    n = rng.randint(0, 60)
    ids = [f"c{i:03d}" for i in rng.sample(range(1000), n)]
    items = [(i, float(rng.choice([0.0, 0.5, 1.0, 1.5]))) for i in ids]
    k = rng.randint(1, 25)
    shards = rng.randint(1, 8)
    if rng.random() < 0.5:
        ordered = sorted(items)
        parts = [ordered[lo:hi] for lo, hi in shard_bounds(len(ordered), shards)]
    else:
        parts = [[] for _ in range(shards)]
        for it in items:
            parts[rng.randrange(shards)].append(it)
    merged = merge_rankings([_top(p, k) for p in parts], k)
    assert merged == _top(items, k)
    # ties are really exercised: equal scores from different shards meet in the merge
    assert merge_shards([[_top(p, k)] for p in parts], k) == [merged]


def test_merge_breaks_a_tie_between_shards_by_id():
    a, b = [("c2", 1.0), ("c4", 0.5)], [("c1", 1.0), ("c3", 1.0)]
    assert merge_rankings([a, b], 3) == [("c1", 1.0), ("c2", 1.0), ("c3", 1.0)]
    with pytest.raises(ValueError, match="different numbers"):
        merge_shards([[a], []], 2)


def _shape_dependent_product(q: np.ndarray, m: np.ndarray) -> np.ndarray:
    """A float32 product as a BLAS may give it, within its error bound, whose last bit
    depends on the shape: the exact sum rounded to float32, then moved one step up or down
    by the parity of (column + number of columns). The same pair in a block of another
    width (a shard, a smaller corpus) gets the other step: every raw score differs."""
    exact = (q.astype(np.float64) @ m.astype(np.float64).T).astype(np.float32)
    up = (np.arange(m.shape[0]) + m.shape[0]) % 2 == 0
    return np.where(up, np.nextafter(exact, np.float32(np.inf)),
                    np.nextafter(exact, np.float32(-np.inf))).astype(np.float32)


def _inputs():
    rng = np.random.default_rng(3)
    n, d = 5003, 384
    v = rng.standard_normal((n, d)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    v[10:40] = v[0]  # exact ties, across shard borders below
    q = rng.standard_normal((70, d)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    q[5] = v[0]
    return [f"c{i:05d}" for i in range(n)], v, q


def _shards_equal_one_index(ids, v, q):
    whole = DenseIndex(ids, v).search(q, 40)
    for s in (2, 3, 7):
        parts = [DenseIndex(ids[lo:hi], v[lo:hi], block=512).search(q, 40)
                 for lo, hi in shard_bounds(len(ids), s)]
        assert merge_shards(parts, 40) == whole
    assert [c for c, _ in whole[5][:31]] == sorted([ids[0]] + ids[10:40])
    assert exact_scores(q[:1], v[:1])[0] == DenseIndex(ids[:1], v[:1]).search(q[:1], 1)[0][0][1]
    return whole


def test_dense_scores_do_not_depend_on_the_matrix_shape(monkeypatch):
    """A BLAS may sum a float32 product differently by shape (forced here, whatever this
    machine's BLAS does: every raw product differs between the two shapes); DenseIndex's
    scores do not, so shards merged equal one index, scores included."""
    ids, v, q = _inputs()
    native = _shards_equal_one_index(ids, v, q)  # this machine's own BLAS, whatever its order
    monkeypatch.setattr(dense, "block_product", _shape_dependent_product)
    raw_full, raw_part = dense.block_product(q, v), dense.block_product(q, v[1:2000])
    assert (raw_full[:, 1:2000] != raw_part).all()
    assert _shards_equal_one_index(ids, v, q) == native


def test_dense_search_takes_its_products_from_block_product(monkeypatch):
    """The hook the test above replaces is the one search uses: products all off by far more
    than the error bound select other candidates."""
    ids, v, q = _inputs()
    monkeypatch.setattr(dense, "block_product", lambda a, m: -(a @ m.T))
    assert DenseIndex(ids, v).search(q[5:6], 1)[0][0][0] != ids[0]


def test_bm25_shards_with_merged_statistics_rank_as_one_index():
    rng = np.random.default_rng(5)
    vocab = np.asarray([f"w{i}" for i in range(800)])
    p = 1.0 / np.arange(1, 801) ** 1.1
    p /= p.sum()
    n = 3001
    texts = [" ".join(vocab[rng.choice(800, rng.integers(1, 30), p=p)]) for _ in range(n)]
    texts[7] = ""  # an empty chunk
    ids = [f"c{i:05d}" for i in range(n)]
    an = get_analyzer("default")
    queries = [an(" ".join(vocab[rng.choice(800, 4, p=p)])) for _ in range(150)]
    whole = BM25Index(ids, map(an, texts)).search_many(queries, 25)
    shards = [AnalysedShard.of(ids[lo:hi], texts[lo:hi], an) for lo, hi in shard_bounds(n, 4)]
    first, at = shards[0], 0  # the analysed shard holds the analyzer's tokens, in order
    for text, n in zip(texts, first.lens.tolist()):
        assert [first.words[t] for t in first.terms[at:at + n].tolist()] == an(text)
        at += n
    assert at == first.terms.size and len(first.lens) == len(first.ids)
    stats = CollectionStats.merge([s.stats() for s in shards])
    assert stats == CollectionStats.of(map(an, texts))
    merged = merge_shards([s.index(stats, 1.5, 0.75, 0.25).search_many(queries, 25)
                           for s in shards], 25)
    assert merged == whole
    # each shard's own statistics would not do
    own = merge_shards([s.index(s.stats(), 1.5, 0.75, 0.25).search_many(queries, 25)
                        for s in shards], 25)
    assert own != whole
