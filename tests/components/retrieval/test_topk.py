"""Exact top-K with ties by position, with and without rounding."""

from __future__ import annotations

import numpy as np
import pytest

from components.retrieval.topk import merge_topk, topk_by_position


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
