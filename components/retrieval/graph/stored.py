"""A knowledge graph kept on disk in the cache's index folder (array_folder: written whole,
checked by sha256, read back memory-mapped), so a later run, or another process of the same
sweep, with the same chunks and graph settings reads the graph instead of building it.
A damaged or incomplete folder reads as missing: the graph is built again."""

from __future__ import annotations

from pathlib import Path

from ablate.components.retrieval import array_folder
from ablate.components.retrieval.graph.build import KnowledgeGraph

FORMAT = "graph-1"
MATRICES = ("incidence", "adjacency")
ARRAYS = tuple(f"{m}_{part}" for m in MATRICES for part in ("data", "indices", "indptr"))
VALUES = ("chunk_ids", "nodes", "meta")


def save(graph: KnowledgeGraph, folder: Path) -> None:
    """Write `graph` to `folder` (atomically)."""
    arrays = {}
    for m in MATRICES:
        matrix = getattr(graph, m)
        arrays.update({f"{m}_data": matrix.data, f"{m}_indices": matrix.indices,
                       f"{m}_indptr": matrix.indptr})
    meta = {"build_s": graph.build_s,
            **{f"{m}_shape": list(getattr(graph, m).shape) for m in MATRICES}}
    array_folder.write(folder, arrays, {"chunk_ids": graph.chunk_ids, "nodes": graph.nodes,
                                        "meta": meta}, FORMAT)


def load(folder: Path) -> KnowledgeGraph | None:
    """The graph saved in `folder`, its arrays memory-mapped; None when there is no intact
    graph there."""
    got = array_folder.read(folder, ARRAYS, VALUES, FORMAT)
    if got is None:
        return None
    arr, values = got
    from scipy import sparse  # here: a run whose stages are all cached reads no graph
    try:
        meta = values["meta"]
        inc, adj = (sparse.csr_matrix((arr[f"{m}_data"], arr[f"{m}_indices"], arr[f"{m}_indptr"]),
                                      shape=tuple(meta[f"{m}_shape"]), copy=False)
                    for m in MATRICES)
        graph = KnowledgeGraph(list(values["chunk_ids"]), list(values["nodes"]), inc, adj,
                               float(meta["build_s"]))
    except (KeyError, TypeError, ValueError):
        return None
    if inc.shape != (len(graph.chunk_ids), len(graph.nodes)) or adj.shape != (len(graph.nodes),) * 2:
        return None
    return graph
