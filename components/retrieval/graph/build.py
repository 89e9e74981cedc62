"""The graph path's offline graph of one chunking: nodes, chunk-node incidence, NPMI edges.

Chunks are held in chunk-id order (a chunk's row is its id's rank, so ties by position are
ties by id). Each chunk's nodes come from the node extractor (nodes.py) over its text;
a node found in more than max(1, max_df x chunks) chunks is dropped (stop words and
frequent terms make hubs that carry no question's meaning); the rest are numbered in
order of first occurrence in chunk-id order, so two builds of the same chunks are equal.
Edges: pmi.npmi_edges over the incidence.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ablate.components.contract.records import Chunk
from ablate.components.retrieval.graph.pmi import npmi_edges
from ablate.components.text.chunk_table import id_order

if TYPE_CHECKING:  # scipy loads only where a graph is built or searched (a run's start stays light)
    from scipy import sparse

Analyse = Callable[[str], Sequence[str]]


@dataclass
class KnowledgeGraph:
    """`incidence`: chunks x nodes, 1.0 where a chunk holds a node (CSR); `adjacency`:
    nodes x nodes NPMI weights (symmetric CSR); `df`: each node's chunk count;
    `build_s`: the seconds its build took (when it was built, not when it was loaded)."""

    chunk_ids: list[str]
    nodes: list[str]
    incidence: sparse.csr_matrix
    adjacency: sparse.csr_matrix
    build_s: float

    def __post_init__(self) -> None:
        self.node_index = {n: i for i, n in enumerate(self.nodes)}
        self.df = np.asarray(self.incidence.sum(axis=0), dtype=np.float64).ravel()

    def stats(self) -> dict[str, Any]:
        """What the manifest records of it: chunks, nodes, edges (undirected), mean degree,
        build seconds."""
        n, edges = len(self.nodes), self.adjacency.nnz // 2
        return {"chunks": len(self.chunk_ids), "nodes": n, "edges": edges,
                "mean_degree": round(2 * edges / n, 3) if n else 0.0,
                "build_s": round(self.build_s, 3)}


def chunk_nodes(texts: Sequence[str], extract: Callable[[str, Analyse], list[str]],
                analyzer: Analyse) -> tuple[list[str], sparse.csr_matrix]:
    """(node names in order of first occurrence, the binary chunks x nodes incidence)."""
    index: dict[str, int] = {}
    cols: list[int] = []
    indptr = [0]
    for text in texts:
        row = sorted({index.setdefault(name, len(index)) for name in extract(text, analyzer)})
        cols.extend(row)
        indptr.append(len(cols))
    data = np.ones(len(cols), dtype=np.float64)
    from scipy import sparse
    matrix = sparse.csr_matrix((data, np.asarray(cols, dtype=np.int64), np.asarray(indptr)),
                               shape=(len(texts), len(index)))
    return list(index), matrix


def keep_specific(nodes: list[str], incidence: sparse.csr_matrix, max_df: float
                  ) -> tuple[list[str], sparse.csr_matrix]:
    """The nodes in at most max(1, max_df x chunks) chunks, in the order they had."""
    df = np.asarray(incidence.sum(axis=0)).ravel()
    keep = np.flatnonzero(df <= max(1.0, max_df * incidence.shape[0]))
    return [nodes[i] for i in keep], incidence[:, keep].tocsr()


def build_graph(chunks: Sequence[Chunk], extract: Callable[[str, Analyse], list[str]],
                analyzer: Analyse, graph: Any) -> KnowledgeGraph:
    """The graph of `chunks` under `graph` (retrieval.graph: max_df, min_pmi, min_count)."""
    t0 = time.perf_counter()
    ordered = [chunks[i] for i in id_order(chunks)]
    nodes, incidence = chunk_nodes([c.text for c in ordered], extract, analyzer)
    nodes, incidence = keep_specific(nodes, incidence, graph.max_df)
    incidence.sort_indices()
    adjacency = npmi_edges(incidence, graph.min_pmi, graph.min_count)
    return KnowledgeGraph([c.chunk_id for c in ordered], nodes, incidence, adjacency,
                          time.perf_counter() - t0)
