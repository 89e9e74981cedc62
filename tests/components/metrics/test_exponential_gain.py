"""NDCG's exponential gain (2^g - 1) on grades of 1024 or more (issue 58.6): `2.0 ** 1024`
overflows, so every score stage of such a sweep failed with OverflowError. Gains are
scaled by 2^-shift (shift: the largest label less 1000) when they would overflow: the
ratio DCG / IDCG is unchanged, and below the shift every figure is bit for bit what the
unshifted formula gives."""

from __future__ import annotations

import math

import pytest

from ablate.components.metrics.retrieval import retrieval_metrics


def _ndcg(gains_in_rank_order, ideal):
    dcg = sum(g / math.log2(r + 1) for r, g in enumerate(gains_in_rank_order, start=1))
    return dcg / sum(g / math.log2(r + 1) for r, g in enumerate(ideal, start=1))


@pytest.mark.parametrize("top", [1024, 1030.5, 5000, 1e6])
def test_large_grades_give_the_ndcg_of_their_ratio(top):
    groups = [{"a": top, "b": top - 1, "c": 1.0}]
    m = retrieval_metrics(["b", "x", "a", "c"], groups, ks=[1, 4], threshold=0.5, gain="exponential")
    # gains relative to a's: 1, 1/2 and ~0 (2^(1 - top)); b first, a third
    assert m["ndcg_at_4"] == pytest.approx(_ndcg([0.5, 0, 1], [1, 0.5]), rel=1e-12)
    assert m["ndcg_at_1"] == pytest.approx(0.5, rel=1e-12)
    assert all(math.isfinite(v) for v in m.values())


def test_small_grades_are_bit_for_bit_the_unshifted_formula():
    groups = [{"a": 3.0, "b": 0.75, "c": 999.0}, {"d": 2.5}]
    m = retrieval_metrics(["b", "d", "a", "c"], groups, ks=[3, 4], threshold=0.5, gain="exponential")
    g = {k: 2.0 ** v - 1.0 for k, v in {"a": 3.0, "b": 0.75, "c": 999.0, "d": 2.5}.items()}
    ideal = sorted(g.values(), reverse=True)
    dcg3 = g["b"] / math.log2(2) + g["d"] / math.log2(3) + g["a"] / math.log2(4)
    idcg3 = sum(v / math.log2(r + 1) for r, v in enumerate(ideal[:3], start=1))
    assert m["ndcg_at_3"] == dcg3 / idcg3


def test_the_linear_gain_is_untouched():
    m = retrieval_metrics(["b", "a"], [{"a": 2000.0, "b": 1000.0}], ks=[2], threshold=0.5)
    assert m["ndcg_at_2"] == (1000.0 + 2000.0 / math.log2(3)) / (2000.0 + 1000.0 / math.log2(3))
