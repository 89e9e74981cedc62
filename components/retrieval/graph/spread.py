"""How mass spreads over the graph from a question's nodes: a registry of spreading rules.

A rule is a function `(adjacency, seeds, graph settings) -> mass`: `adjacency` the
weighted nodes x nodes matrix (scipy CSR, symmetric), `seeds` a nodes x questions array
whose columns each sum to 1 (a column of zeros for a question linked to no node), `mass`
the same shape. SPREADING holds them by name (`retrieval.graph.spreading`); a plugin
registers its own with the fields it reads.

- `ppr`: Personalized PageRank by power iteration. P is the adjacency with each row
  divided by its sum (a node's edge weights sum to 1); at each step
  m <- (1 - d) s + d (P^T m + dangling(m) s), with d `retrieval.graph.damping` and
  dangling(m) the mass on nodes without edges, which returns to the seeds. The error after
  t steps is at most d^t, so a fixed number of steps, iterations(d) = ceil(ln TOLERANCE /
  ln d), depends only on d (20 steps at 0.5, 86 at 0.85): a question's mass never depends
  on which other questions are in its batch (each column is computed alone, in the same
  order). The steps run in float32 (the sparse products are the whole cost, and float32
  halves it: benchmarks/graph_build.py), so masses are exact to about 1e-6.
- `hops`: the seeds plus one step along the row-normalised edges (m = s + P^T s): the
  question's nodes and their direct neighbours, nothing further.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ablate.components.contract.registry import Registry

if TYPE_CHECKING:  # scipy loads only where a graph is built or searched (a run's start stays light)
    from scipy import sparse

Spreading = Callable[["sparse.csr_matrix", np.ndarray, Any], np.ndarray]
SPREADING: Registry[Spreading] = Registry("graph spreading",
                                          config_field="retrieval.graph.spreading")

TOLERANCE = 1e-6  # the most mass (L1, per question) the fixed number of steps may leave
MAX_ITERATIONS = 500


def iterations(damping: float) -> int:
    """Steps after which the power iteration's L1 error is at most TOLERANCE."""
    return min(MAX_ITERATIONS, max(1, math.ceil(math.log(TOLERANCE) / math.log(damping))))


def transition(adjacency: sparse.csr_matrix) -> tuple[sparse.csr_matrix, np.ndarray]:
    """(P^T with P the row-normalised adjacency, a mask of the nodes without edges)."""
    out = np.asarray(adjacency.sum(axis=1), dtype=np.float64).ravel()
    dangling = out <= 0
    scale = np.divide(1.0, out, out=np.zeros_like(out), where=~dangling)
    from scipy import sparse
    p = sparse.diags(scale) @ adjacency
    return p.T.tocsr(), dangling


def personalized_pagerank(adjacency: sparse.csr_matrix, seeds: np.ndarray,
                          damping: float) -> np.ndarray:
    """The PPR mass of every node for each column of seeds (module docstring)."""
    pt, dangling = transition(adjacency)
    # in float32 (half the memory traffic of the sparse products, which are the cost);
    # sums as sparse products, each column added up alone in node order (a numpy sum over
    # one column may sum pairwise, over several row by row)
    pt = pt.astype(np.float32)
    from scipy import sparse
    lost_of = sparse.csr_matrix(dangling.astype(np.float32)[None, :])
    start = np.array(seeds, dtype=np.float32, ndmin=2)
    restart, follow = np.float32(1.0 - damping), np.float32(damping)
    mass = start.copy()
    for _ in range(iterations(damping)):
        lost = lost_of @ mass
        mass = restart * start + follow * (pt @ mass + start * lost)
    return mass.astype(np.float64)


@SPREADING.register("ppr", reads=("retrieval.graph.damping",))
def _ppr(adjacency: sparse.csr_matrix, seeds: np.ndarray, graph: Any) -> np.ndarray:
    return personalized_pagerank(adjacency, seeds, graph.damping)


@SPREADING.register("hops")
def _hops(adjacency: sparse.csr_matrix, seeds: np.ndarray, graph: Any) -> np.ndarray:
    pt, _ = transition(adjacency)
    return seeds + pt @ seeds
