"""Edges of the graph path's graph: normalised PMI of two nodes' co-occurrence in a chunk.

With N chunks, a node's chunk count n_i and the chunks holding both nodes n_ij:

    pmi(i, j)  = ln(n_ij * N / (n_i * n_j))
    npmi(i, j) = pmi(i, j) / -ln(n_ij / N)        (1 when n_ij = N)

NPMI is -1 for nodes never together, 0 for independent ones and 1 for nodes always
together, so one threshold means the same on any corpus. An edge i-j (undirected, no
self loops) is kept when n_ij >= min_count and npmi > min_pmi; its weight is its NPMI, so
a kept edge's weight is positive only when min_pmi >= 0 (a negative threshold keeps
negative associations, which are then weighted by max(npmi, 0) and carry no mass).
"""

from __future__ import annotations

import numpy as np
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
    keep = npmi > min_pmi
    weight = np.maximum(npmi[keep], 0.0)
    n = incidence.shape[1]
    out = sparse.csr_matrix((weight, (i[keep], j[keep])), shape=(n, n))
    out.eliminate_zeros()
    out.sort_indices()
    return out
