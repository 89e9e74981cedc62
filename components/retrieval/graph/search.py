"""The graph path's online search: link a question to nodes, spread, score chunks.

- Linking: the question is analysed as the chunks were; every run of one to
  nodes.MAX_SPAN_WORDS consecutive terms that names a node is one of its nodes (so "who
  directed the lord of the rings" finds the node of "The Lord of the Rings" whether or not
  it was capitalised). Each linked node's seed weight is 1 / its chunk count (HippoRAG's
  node specificity: a rare node says more), the weights of a question summing to 1.
- Spreading: the rule `retrieval.graph.spreading` names (spread.py).
- Scoring: a chunk's score is the sum of the mass of its nodes (incidence x mass),
  rounded to SCORE_DECIMALS so equal sums are exact ties. A chunk with no mass is not
  retrieved: a question linked to no node gets an empty ranking (fusion then takes the
  other paths' rankings alone). Top `depth` by score, ties by chunk id.

Questions are searched a block of BLOCK at a time; each question's column is computed
alone (sparse products, column by column), so its ranking never depends on the others.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ablate.components.contract.records import Ranking
from ablate.components.retrieval.graph.build import KnowledgeGraph
from ablate.components.retrieval.graph.nodes import MAX_SPAN_WORDS

SCORE_DECIMALS = 9
BLOCK = 64  # questions whose mass is spread together


def link(terms: Sequence[str], graph: KnowledgeGraph) -> dict[int, float]:
    """{node: seed weight} of an analysed question (weights summing to 1; {} when none)."""
    found: set[int] = set()
    for n in range(1, MAX_SPAN_WORDS + 1):
        for i in range(len(terms) - n + 1):
            node = graph.node_index.get(" ".join(terms[i:i + n]))
            if node is not None:
                found.add(node)
    weights = {i: 1.0 / graph.df[i] for i in sorted(found)}
    total = sum(weights.values())
    return {i: w / total for i, w in weights.items()}


def top_chunks(scores: np.ndarray, ids: Sequence[str], k: int) -> Ranking:
    """The top k chunks of one question's scores (positions in id order) with a positive
    score, best first, ties by position (= by id)."""
    rounded = np.round(scores, SCORE_DECIMALS)
    pos = np.flatnonzero(rounded > 0)
    order = pos[np.lexsort((pos, -rounded[pos]))][:k]
    return [(ids[p], float(rounded[p])) for p in order]


def search(graph: KnowledgeGraph, queries: Sequence[Sequence[str]], k: int,
           spread: Callable[[Any, np.ndarray, Any], np.ndarray], settings: Any) -> list[Ranking]:
    """Each analysed query's top k chunks (module docstring)."""
    out: list[Ranking] = []
    n_nodes = len(graph.nodes)
    for a in range(0, len(queries), BLOCK):
        block = queries[a:a + BLOCK]
        seeds = np.zeros((n_nodes, len(block)))
        for j, terms in enumerate(block):
            for node, w in link(terms, graph).items():
                seeds[node, j] = w
        if n_nodes and k > 0:
            mass = spread(graph.adjacency, seeds, settings)
            scores = graph.incidence @ mass
            out.extend(top_chunks(scores[:, j], graph.chunk_ids, k) for j in range(len(block)))
        else:
            out.extend([] for _ in block)
    return out
