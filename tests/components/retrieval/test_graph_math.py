"""The graph path's arithmetic against hand-computed values: NPMI edges (pmi.py) and the
spreading rules (spread.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import sparse

from ablate.components.retrieval.graph.pmi import cooccurrence, npmi_edges
from ablate.components.retrieval.graph.spread import iterations, personalized_pagerank, transition

# 4 chunks, nodes A B C: chunk 0 {A, B}, chunk 1 {A, B}, chunk 2 {A, C}, chunk 3 {C}
INCIDENCE = sparse.csr_matrix(np.array([[1, 1, 0], [1, 1, 0], [1, 0, 1], [0, 0, 1]], dtype=float))
NPMI_AB = math.log(2 * 4 / (3 * 2)) / -math.log(2 / 4)  # 0.41504: together twice, A in 3, B in 2
NPMI_AC = math.log(1 * 4 / (3 * 2)) / -math.log(1 / 4)  # -0.29248: together once, less than chance


def test_cooccurrence_counts_chunks_holding_both():
    assert cooccurrence(INCIDENCE).toarray().tolist() == [[0, 2, 1], [2, 0, 0], [1, 0, 0]]


def test_npmi_edges_by_hand():
    edges = npmi_edges(INCIDENCE, min_pmi=0.0, min_count=1).toarray()
    assert edges[0, 1] == pytest.approx(NPMI_AB) and edges[1, 0] == pytest.approx(NPMI_AB)
    assert NPMI_AC < 0 and edges[0, 2] == 0 and edges[2, 0] == 0  # below chance: no edge
    assert edges[1, 2] == 0 and np.all(np.diag(edges) == 0)


def test_min_pmi_keeps_only_edges_above_it():
    assert npmi_edges(INCIDENCE, min_pmi=0.4, min_count=1).nnz == 2  # A-B, both directions
    assert npmi_edges(INCIDENCE, min_pmi=0.42, min_count=1).nnz == 0


def test_min_count_keeps_only_pairs_seen_that_often():
    # 8 chunks: {A, B} twice, {C}, {B, C}, {D} four times (A in 2, B in 3, C in 2)
    chunks = sparse.csr_matrix(np.array([[1, 1, 0, 0]] * 2 + [[0, 0, 1, 0], [0, 1, 1, 0]]
                                        + [[0, 0, 0, 1]] * 4, dtype=float))
    once = npmi_edges(chunks, min_pmi=0.0, min_count=1).toarray()
    twice = npmi_edges(chunks, min_pmi=0.0, min_count=2).toarray()
    assert once[1, 2] > 0 and twice[1, 2] == 0  # B-C together once
    assert twice[0, 1] == once[0, 1] > 0


def test_npmi_is_one_for_nodes_always_together():
    both = sparse.csr_matrix(np.ones((3, 2)))
    assert npmi_edges(both, 0.0, 1).toarray()[0, 1] == 1.0


# a path 0 - 1 - 2 with unit weights, and node 3 without edges
PATH = sparse.csr_matrix(np.array([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 0]], dtype=float))


def test_ppr_by_hand():
    """m = (1-d) s + d P^T m with d = 0.5 from node 0 solves to (7/12, 1/3, 1/12)."""
    seeds = np.array([[1.0], [0.0], [0.0], [0.0]])
    mass = personalized_pagerank(PATH, seeds, 0.5)[:, 0]
    assert mass == pytest.approx([7 / 12, 1 / 3, 1 / 12, 0.0], abs=2e-6)


def test_ppr_mass_on_a_node_without_edges_returns_to_the_seeds():
    """Seeds 0 and 3, half each: node 3's mass m3 = 0.25 + 0.5 * m3 * 0.5, so 1/3; the
    total stays 1."""
    seeds = np.array([[0.5], [0.0], [0.0], [0.5]])
    mass = personalized_pagerank(PATH, seeds, 0.5)[:, 0]
    assert mass[3] == pytest.approx(1 / 3, abs=2e-6) and mass.sum() == pytest.approx(1.0, abs=2e-6)


def test_damping_sets_how_far_mass_goes():
    seeds = np.array([[1.0], [0.0], [0.0], [0.0]])
    near = personalized_pagerank(PATH, seeds, 0.2)[:, 0]
    far = personalized_pagerank(PATH, seeds, 0.85)[:, 0]
    assert far[2] > near[2] and far[0] < near[0]


def test_fixed_steps_depend_on_damping_alone():
    assert iterations(0.5) == 20 and iterations(0.85) == 86  # 0.5^20 < 1e-6 <= 0.5^19


def test_a_question_s_mass_does_not_depend_on_its_batch():
    rng = np.random.default_rng(0)
    dense = np.triu(rng.random((40, 40)) * (rng.random((40, 40)) < 0.2), 1)
    adjacency = sparse.csr_matrix(dense + dense.T)
    seeds = rng.random((40, 5))
    seeds /= seeds.sum(axis=0)
    together = personalized_pagerank(adjacency, seeds, 0.5)
    for j in range(5):
        assert np.array_equal(personalized_pagerank(adjacency, seeds[:, j:j + 1], 0.5)[:, 0],
                              together[:, j])


def test_transition_rows_sum_to_one_and_mark_dangling_nodes():
    pt, dangling = transition(PATH)
    assert np.asarray(pt.sum(axis=0)).ravel()[:3] == pytest.approx([1, 1, 1])
    assert dangling.tolist() == [False, False, False, True]
