"""The approximate dense indexes (components/retrieval/dense/ann.py) against the exact one: recall,
exactness when every IVF cell is searched, determinism, ties, tiny and empty corpora; the
flat index's stage keys (neutral: as before the index was a variable); the recall metric."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ablate.components.contract.config import AnnConfig, PipelineConfig
from ablate.components.contract.records import Question
from ablate.components.metrics.registry import METRICS, PathView, QuestionView
from ablate.components.retrieval.dense.ann import DENSE_INDEXES, flat, hnsw, ivf, ivf_cells


def _unit(n: int, dim: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


N, DIM, K = 3000, 32, 10
VECTORS, QUERIES = _unit(N, DIM, 0), _unit(40, DIM, 1)
IDS = [f"c{i:05d}" for i in range(N)][::-1]  # not in id order: the index sorts them


def _ids(rankings) -> list[list[str]]:
    return [[c for c, _ in r] for r in rankings]


def _recall(found, exact) -> float:
    return float(np.mean([len(set(a) & set(b)) / len(b) for a, b in zip(_ids(found), _ids(exact))]))


@pytest.fixture(scope="module")
def exact():
    return flat(IDS, VECTORS, AnnConfig()).search(QUERIES, K)


def test_hnsw_recall_is_high_and_scores_are_exact(exact):
    found = hnsw(IDS, VECTORS, AnnConfig()).search(QUERIES, K)
    assert _recall(found, exact) >= 0.95
    for r, e in zip(found, exact):  # a candidate's score is the exact cosine, best first
        assert [s for _, s in r] == sorted((s for _, s in r), reverse=True)
        by_id = dict(e)
        for cid, s in r:
            if cid in by_id:
                assert s == pytest.approx(by_id[cid], abs=1e-6)


def test_ivf_searching_every_cell_is_flat(exact):
    found = ivf(IDS, VECTORS, AnnConfig(ivf_nlist=16, ivf_nprobe=16)).search(QUERIES, K)
    assert _ids(found) == _ids(exact)
    few = ivf(IDS, VECTORS, AnnConfig(ivf_nlist=16, ivf_nprobe=1)).search(QUERIES, K)
    assert _recall(few, exact) < 1.0  # one cell of 16 is an approximation


@pytest.mark.parametrize("builder", [hnsw, ivf])
def test_two_builds_give_the_same_rankings(builder):
    a = builder(IDS, VECTORS, AnnConfig()).search(QUERIES, K)
    b = builder(IDS, VECTORS, AnnConfig()).search(QUERIES, K)
    assert a == b


@pytest.mark.parametrize("builder", [hnsw, ivf])
def test_ties_go_to_the_lower_id(builder):
    same = np.repeat(_unit(1, DIM, 2), 4, axis=0)  # four equal vectors
    other = _unit(6, DIM, 3)
    ids = ["d3", "d1", "d0", "d2", "x0", "x1", "x2", "x3", "x4", "x5"]
    vectors = np.vstack([same, other])
    found = builder(ids, vectors, AnnConfig(ivf_nprobe=100)).search(same[:1], 4)[0]
    assert [c for c, _ in found] == ["d0", "d1", "d2", "d3"]


@pytest.mark.parametrize("builder", [flat, hnsw, ivf])
@pytest.mark.parametrize("n", [0, 1, 3])
def test_tiny_corpora(builder, n):
    ann = AnnConfig(ivf_nlist=50, ivf_nprobe=50)  # more cells than vectors: capped
    found = builder([f"c{i}" for i in range(n)], VECTORS[:n], ann).search(QUERIES[:2], K)
    assert len(found) == 2 and all(len(r) == n for r in found)
    assert _ids(found) == _ids(flat([f"c{i}" for i in range(n)], VECTORS[:n], ann)
                               .search(QUERIES[:2], K))


def test_automatic_cells():
    assert ivf_cells(0, 0) == 1 and ivf_cells(5, 0) == 1 and ivf_cells(5, 9) == 5
    assert ivf_cells(10_000, 0) == 10_000 // 39  # at least 39 vectors a cell
    assert ivf_cells(10_000_000, 0) == 1024 and ivf_cells(10_000, 300) == 300


# ---- keys: flat is neutral, the approximate indexes key their own parameters ---------

EXPERIMENT = {"data": "d", "questions": "q", "tokenizer": "t", "metrics": {"ks": [5]},
              "labels": "span"}


def _keys(retrieval: dict) -> dict[str, str]:
    from ablate.flows.plan.graph import Plan, add_variant
    cfg = PipelineConfig.model_validate({"retrieval": {"paths": ["bm25", "dense"], **retrieval}})
    return add_variant(Plan(), "v", cfg, EXPERIMENT)


def test_flat_keys_are_those_from_before_the_index_was_a_variable(monkeypatch):
    """Pinned: the stage keys of the default (flat) pipeline as computed before
    `retrieval.dense_index` existed (commit 1c13c3f, dense path version 2: 3eb51f62...),
    with only the dense path's version since bumped to 3 (exact pair scores) and library
    and package versions fixed; changing an ANN parameter leaves them as they are. The
    backend is set to `torch`, the default of those days (onnx since issue 42)."""
    from ablate.components.contract import registry
    from ablate.flows.plan import graph
    monkeypatch.setattr(registry, "installed_version", lambda d: "pinned")
    monkeypatch.setattr(graph, "components_version", "pinned")
    from ablate.components.pipeline import read_values, resolve, stage_def, stage_key
    cfg = PipelineConfig.model_validate({"retrieval": {"dense_backend": "torch"}})
    sd = stage_def("retrieve")
    resolved = resolve(cfg, sd.select(cfg, "dense"))
    reads = tuple(sorted(set(resolved.reads) | set(sd.reads)))
    key = stage_key(sd, resolved, read_values(cfg, reads, resolved.files), {"chunk": "c"},
                    EXPERIMENT, "dense", "pinned")
    assert key == "8ebc2955ae6285913ed862aa"  # 1c13c3f's computation at version 3
    base = _keys({})
    assert _keys({"dense_index": "flat", "ann": {"hnsw_m": 8, "ivf_nprobe": 3}}) == base


def test_an_index_keys_only_its_own_parameters():
    base, h, i = _keys({}), _keys({"dense_index": "hnsw"}), _keys({"dense_index": "ivf"})
    for keys in (h, i):
        assert keys["retrieve:bm25"] == base["retrieve:bm25"]
        assert keys["retrieve:dense"] != base["retrieve:dense"] and keys["fuse"] != base["fuse"]
    assert h["retrieve:dense"] != i["retrieve:dense"]
    assert _keys({"dense_index": "hnsw", "ann": {"hnsw_ef_search": 9}})["retrieve:dense"] \
        != h["retrieve:dense"]
    assert _keys({"dense_index": "hnsw", "ann": {"ivf_nprobe": 9}}) == h
    assert _keys({"dense_index": "ivf", "ann": {"ivf_nprobe": 9}})["retrieve:dense"] \
        != i["retrieve:dense"]
    assert _keys({"dense_index": "ivf", "ann": {"hnsw_m": 9}}) == i


def test_the_built_in_indexes_are_the_registry_s():
    """The registry is the one list of index names (issue 43.2): a name outside it is refused
    before any stage, one line naming the field (tests/contract/test_registry_choices.py)."""
    assert sorted(DENSE_INDEXES.names()) == ["flat", "flat16", "hnsw", "ivf"]


# ---- the recall metric -------------------------------------------------------------------

def _view(paths: dict[str, PathView]) -> QuestionView:
    q = Question("q0", "?", ("a",), True)
    return QuestionView(q, [], {}, None, None, None, {"ks": [1, 2, 4]}, paths=paths)


def test_recall_against_flat():
    recall = METRICS.get("dense/ann_recall").compute
    ann = PathView(("a", "x", "b", "c"), exact_ids=("a", "b", "c", "d"), build_s=2.0, search_s=0.1)
    assert recall(_view({"dense": ann})) == {"dense/ann_recall_at_1": 1.0,
                                             "dense/ann_recall_at_2": 0.5,
                                             "dense/ann_recall_at_4": 0.75}
    exact = PathView(("a", "b"))  # flat: its own top k
    assert set(recall(_view({"dense": exact})).values()) == {1.0}
    assert recall(_view({"bm25": exact})) == {}  # no dense path: no column at all
    empty = PathView((), exact_ids=())
    assert all(math.isnan(v) for v in recall(_view({"dense": empty})).values())
    cost = METRICS.get("index/*").compute(_view({"dense": ann, "bm25": exact}))
    assert cost == {"index/retrieve_dense_build_s": 2.0, "index/retrieve_dense_search_s": 0.1}


def test_flat16_holds_half_and_ranks_close_to_flat():
    """float16 storage: half the bytes, each question's top 10 mostly flat's, scores
    within float16's rounding of flat's; the stage's recall against flat is defined."""
    from ablate.components.retrieval.dense.ann import DENSE_INDEXES, HalfIndex
    from ablate.components.retrieval.dense.encoder import DenseIndex
    rng = np.random.default_rng(7)
    vecs = rng.standard_normal((3000, 32)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    ids = [f"c{(i * 7) % 3000:05d}" for i in range(3000)]
    q = vecs[:40] + 0.1 * rng.standard_normal((40, 32)).astype(np.float32)
    half = DENSE_INDEXES.get("flat16")(ids, vecs, PipelineConfig().retrieval.ann)
    assert isinstance(half, HalfIndex) and half.vectors.dtype == np.float16
    assert half.vectors.nbytes * 2 == half.exact.vectors.nbytes
    flat = DenseIndex(ids, vecs).search(q, 10)
    got = half.search(q, 10)
    overlap = np.mean([len({c for c, _ in a} & {c for c, _ in b}) / 10 for a, b in zip(got, flat)])
    assert overlap > 0.9
    assert half.exact.search(q, 10) == flat
    for mine, theirs in zip(got, flat):
        scored = dict(mine)
        assert all(abs(scored[c] - s) < 2e-3 for c, s in theirs if c in scored)
    assert HalfIndex(ids, vecs, exact=False).exact is None
