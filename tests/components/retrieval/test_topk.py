"""Exact top-K with ties by position, with and without rounding."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from ablate.components.retrieval.topk import merge_topk, topk_by_position, topk_rows


def _brute(scores, k, decimals=None):
    vals = scores if decimals is None else np.round(scores, decimals)
    order = sorted(range(len(vals)), key=lambda i: (-vals[i], i))[:k]
    return np.array(order, dtype=np.int64), vals[order]


@pytest.mark.parametrize("decimals", [None, 3])
@pytest.mark.parametrize("k", [0, 1, 5, 37, 200, 500])
def test_matches_brute_force_with_many_ties(k, decimals):
    rng = np.random.default_rng(k)
    base = rng.integers(0, 20, size=300).astype(float) / 7  # many exact ties
    noise = rng.normal(scale=1e-7, size=300) * (rng.random(300) < 0.5)  # near-ties
    scores = base + noise
    pos, vals = topk_by_position(scores, k, decimals)
    exp_pos, exp_vals = _brute(scores, k, decimals)
    assert pos.tolist() == exp_pos.tolist()
    np.testing.assert_array_equal(vals, exp_vals)


def test_merge_topk_rows():
    s = np.array([[0.5, 0.9, 0.5, 0.1], [0.2, 0.2, 0.2, 0.3]])
    p = np.array([[4, 1, 2, 3], [9, 8, 7, 6]])
    top_s, top_p = merge_topk(s, p, 3)
    assert top_p.tolist() == [[1, 2, 4], [6, 7, 8]]
    assert top_s.tolist() == [[0.9, 0.5, 0.5], [0.3, 0.2, 0.2]]


def _numba_topk_rows(scores, k, decimals):
    from ablate.components.retrieval.lexical import bm25_numba
    return bm25_numba.topk_rows(scores, k, decimals)


ROWS_IMPLS = [topk_rows] + ([_numba_topk_rows] if importlib.util.find_spec("numba") else [])


@pytest.mark.parametrize("impl", ROWS_IMPLS)  # numpy, and the numba kernel's top-k
@pytest.mark.parametrize("k", [1, 3, 10, 64, 299, 300, 1000])
def test_topk_rows_equals_topk_by_position_per_row(impl, k):
    rng = np.random.default_rng(k)
    rows = [rng.integers(0, 20, size=300) / 7,  # many exact ties
            rng.integers(0, 20, size=300) / 7 + rng.normal(scale=4e-10, size=300),  # near-ties
            np.zeros(300),  # all equal: too many candidates, done alone
            np.where(rng.random(300) < 0.02, rng.random(300), 0.0),  # few nonzero
            -rng.random(300),  # negative
            rng.random(300)]
    scores = np.array(rows)
    pos, vals = impl(scores, k, 9)
    assert pos.shape == vals.shape == (len(rows), min(k, 300))
    for r, row in enumerate(rows):
        exp_pos, exp_vals = topk_by_position(row, k, 9)
        assert pos[r].tolist() == exp_pos.tolist()
        np.testing.assert_array_equal(vals[r], exp_vals)
        assert pos[r].tolist() == _brute(row, k, 9)[0].tolist()


@pytest.mark.parametrize("impl", ROWS_IMPLS)
def test_topk_rows_empty(impl):
    assert impl(np.zeros((2, 0)), 5, 9)[0].shape == (2, 0)
    assert impl(np.zeros((0, 4)), 5, 9)[0].shape == (0, 4)
    assert impl(np.ones((2, 4)), 0, 9)[0].shape == (2, 0)
