"""Fusion: RRF (plain, weighted), convex (min-max, z-score), pass-through, weight checks."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from ablate.components.contract.config import FusionConfig, PipelineConfig
from ablate.components.contract.errors import InputError
from ablate.components.retrieval.fusion import FUSERS, fuse, minmax, zscore
from ablate.components.retrieval.stages import fuse_rankings

BM25 = [("a", 9.0), ("b", 5.0), ("c", 1.0)]
DENSE = [("c", 0.9), ("d", 0.8), ("a", 0.1)]


def test_rrf_hand_computed():
    out = fuse({"bm25": BM25, "dense": DENSE}, FusionConfig(method="rrf", rrf_k=10))
    exp = {"a": 1 / 11 + 1 / 13, "c": 1 / 13 + 1 / 11, "b": 1 / 12, "d": 1 / 12}
    assert [d for d, _ in out] == ["a", "c", "b", "d"]  # a == c and b == d: ties by id
    for d, s in out:
        assert s == pytest.approx(exp[d])


def test_weighted_rrf_hand_computed():
    cfg = FusionConfig(method="rrf", rrf_k=1, weights={"bm25": 2.0, "dense": 1.0})
    out = dict(fuse({"bm25": BM25, "dense": DENSE}, cfg))
    assert out["a"] == pytest.approx(2 / 2 + 1 / 4)
    assert out["d"] == pytest.approx(1 / 3)
    assert out["b"] == pytest.approx(2 / 3)


def test_rrf_k_changes_order():
    per = {"bm25": [("a", 5.0), ("b", 4.0), ("d", 3.0), ("e", 2.0), ("c", 1.0)],
           "dense": [("x", 5.0), ("y", 4.0), ("z", 3.0), ("w", 2.0), ("c", 1.0)]}
    # "a": rank 1 in one path; "c": rank 5 in both. k=1: 1/2 > 2/6; k=100: 1/101 < 2/105
    small = fuse(per, FusionConfig(rrf_k=1))
    large = fuse(per, FusionConfig(rrf_k=100))
    assert small[0][0] == "a" and large[0][0] == "c"


def test_convex_minmax_hand_computed():
    cfg = FusionConfig(method="convex", weights={"bm25": 0.5, "dense": 0.5})
    out = dict(fuse({"bm25": BM25, "dense": DENSE}, cfg))
    # bm25 minmax: a 1, b 0.5, c 0 ; dense minmax: c 1, d 0.875, a 0 ; missing -> 0
    assert out == pytest.approx({"a": 0.5, "b": 0.25, "c": 0.5, "d": 0.4375})


def test_convex_zscore_missing_gets_path_minimum():
    cfg = FusionConfig(method="convex", normalization="zscore")
    out = dict(fuse({"p": [("a", 3.0), ("b", 1.0)], "q": [("b", 2.0), ("c", 0.0)]}, cfg))
    # each path: z = +1, -1 ; missing doc gets that path's minimum (-1)
    assert out == pytest.approx({"a": 1 - 1, "b": -1 + 1, "c": -1 - 1})
    assert list(out) == ["a", "b", "c"]


def test_single_path_passes_through_unchanged():
    for method in FUSERS.names():
        assert fuse({"dense": DENSE}, FusionConfig(method=method, rrf_k=5)) == DENSE


def test_weight_validation():
    with pytest.raises(InputError, match="fusion.weights"):
        fuse({"bm25": BM25, "dense": DENSE}, FusionConfig(weights={"bm25": 1.0}))
    # the config rejects negative and all-zero weights when it is built (from YAML)
    with pytest.raises(ValidationError, match="negative"):
        FusionConfig(weights={"bm25": 1.0, "dense": -1})
    with pytest.raises(ValidationError, match="all zero"):
        FusionConfig(weights={"bm25": 0, "dense": 0})
    # zero for every path this variant uses is caught when fusing
    with pytest.raises(InputError, match="all zero"):
        fuse({"bm25": BM25, "dense": DENSE}, FusionConfig(weights={"bm25": 0, "dense": 0, "splade": 1}))
    # weights of paths absent from this variant are ignored
    out = fuse({"bm25": BM25, "dense": DENSE},
               FusionConfig(weights={"bm25": 1, "dense": 1, "splade": 3}))
    assert len(out) == 4


def test_unknown_method_is_input_error():
    with pytest.raises(InputError, match="unknown fuser 'borda'"):
        fuse_rankings({"bm25": {"q": BM25}}, PipelineConfig(fusion=FusionConfig(method="borda")))


def test_fuse_rankings_per_question():
    out = fuse_rankings({"bm25": {"q1": BM25, "q2": []}, "dense": {"q1": DENSE, "q2": []}},
                        PipelineConfig(fusion=FusionConfig(rrf_k=10)))
    assert set(out) == {"q1", "q2"} and out["q2"] == []
    assert out["q1"][0][0] == "a"


def test_normalizers():
    assert list(minmax(np.array([2.0, 4.0, 3.0]))) == [0.0, 1.0, 0.5]
    assert list(minmax(np.array([7.0, 7.0]))) == [1.0, 1.0]
    assert list(zscore(np.array([5.0, 5.0]))) == [0.0, 0.0]
    assert zscore(np.array([1.0, 3.0])) == pytest.approx([-1.0, 1.0])

