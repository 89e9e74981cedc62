"""Edges of the graph path's graph: normalised PMI of two nodes' co-occurrence in a chunk.

With N chunks, a node's chunk count n_i and the chunks holding both nodes n_ij:

    pmi(i, j)  = ln(n_ij * N / (n_i * n_j))
    npmi(i, j) = pmi(i, j) / -ln(n_ij / N)        (1 when n_ij = N)

NPMI is -1 for nodes never together, 0 for independent ones and 1 for nodes always
together, so one threshold means the same on any corpus. An edge i-j (undirected, no
self loops) is kept when n_ij >= min_count and npmi > min_pmi (min_pmi >= 0: nodes found
together no more often than chance are never linked); its weight is its NPMI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # scipy loads only where a graph is built or searched (a run's start stays light)
    from scipy import sparse


def cooccurrence(incidence: sparse.csr_matrix) -> sparse.csr_matrix:
    """n_ij: the chunks holding both node i and node j (nodes x nodes, no diagonal), from
    a binary chunks x nodes incidence."""
    binary = incidence.astype(np.float64)
    counts = (binary.T @ binary).tocsr()
    counts.setdiag(0)
    counts.eliminate_zeros()
    counts.sort_indices()
    return counts


def npmi_edges(incidence: sparse.csr_matrix, min_pmi: float, min_count: int
               ) -> sparse.csr_matrix:
    """The weighted adjacency (nodes x nodes, symmetric CSR, indices sorted) of the edges
    kept (module docstring)."""
    n_chunks = incidence.shape[0]
    counts = cooccurrence(incidence).tocoo()
    df = np.asarray(incidence.sum(axis=0), dtype=np.float64).ravel()
    i, j, nij = counts.row, counts.col, counts.data
    keep = nij >= min_count
    i, j, nij = i[keep], j[keep], nij[keep]
    p_ij = nij / n_chunks
    pmi = np.log(nij * n_chunks / (df[i] * df[j]))
    with np.errstate(divide="ignore", invalid="ignore"):
        npmi = np.where(p_ij >= 1.0, 1.0, pmi / -np.log(p_ij))
    keep = npmi > max(min_pmi, 0.0)
    weight = npmi[keep]
    n = incidence.shape[1]
    from scipy import sparse
    out = sparse.csr_matrix((weight, (i[keep], j[keep])), shape=(n, n))
    out.eliminate_zeros()
    out.sort_indices()
    return out
