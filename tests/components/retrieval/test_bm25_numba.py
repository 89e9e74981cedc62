"""The numba BM25 kernel gives exactly the numpy path's rankings and scores (same floats,
same ties by id), on real text and on crafted ties, and rank-bm25's scores within 1e-6."""

from __future__ import annotations

import numpy as np
import pytest

from components.retrieval.bm25 import BM25Index

pytest.importorskip("numba")


def _corpus():
    from components.data import load_dataset
    from components.retrieval.analyzer import get_analyzer
    from tests.conftest import FIXTURES
    ds = load_dataset(FIXTURES / "squad_tiny.json", format="squad")
    an = get_analyzer("default")
    words = [w for d in ds.documents for w in d.text.split()]
    chunks = [" ".join(words[i:i + 30]) for i in range(0, len(words) - 30, 7)]
    chunks += chunks[:5]  # exact duplicates: tied scores broken by id
    docs = an.batch(chunks)
    ids = [f"c{i:05d}" for i in range(len(docs))]
    queries = [an(q.question) for q in ds.questions] + [["zzzunknown"], []]
    return ids, docs, queries


def test_kernel_equals_numpy_path_exactly():
    ids, docs, queries = _corpus()
    index = BM25Index(ids[::-1], docs[::-1])  # ids not in input order
    assert index._kernel
    for q in queries:
        for k in (1, 5, 10, 50, len(ids) + 3):
            assert index.search(q, k) == index.search_numpy(q, k), (q, k)


def test_repeated_query_terms_and_ties():
    index = BM25Index(["b", "a", "c", "d"], [["x", "y"], ["x", "y"], ["y"], ["z"]])
    for q in (["x"], ["x", "x", "y"], ["y"], ["w"], ["z", "x"]):
        for k in (1, 2, 3, 4, 9):
            assert index.search(q, k) == index.search_numpy(q, k), (q, k)
    assert [d for d, _ in index.search(["x"], 2)] == ["a", "b"]  # a tie, broken by id


def test_scores_match_rank_bm25():
    from rank_bm25 import BM25Okapi
    ids, docs, queries = _corpus()
    index = BM25Index(ids, docs)
    ref = BM25Okapi(docs)
    for q in queries[:20]:
        expected = ref.get_scores(q)
        got = dict(index.search(q, len(ids)))
        assert max(abs(got[i] - s) for i, s in zip(ids, expected)) < 1e-6


def test_negative_weights_take_the_numpy_path():
    # every term in most documents: negative idf, floored at epsilon x a negative mean
    docs = [["a", "b"], ["a", "b"], ["a", "b"], ["a"]]
    index = BM25Index(["1", "2", "3", "4"], docs)
    assert (index.matrix.data < 0).any() and not index._kernel
    assert index.search(["a"], 4) == index.search_numpy(["a"], 4)
