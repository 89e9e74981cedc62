"""The `graph` retrieval path: registered in PATHS beside bm25 and dense.

Offline: the graph of the chunking (build.py), built once per (chunk texts, analyzer and
its options, node extractor, `max_df`, `min_pmi`, `min_count`), kept on disk in the
cache's index folder (stored.py, as BM25's index is) and in a per-process memo, so the
variants of a sweep that share a chunking and those settings (a damping or depth sweep,
the three-path matrix) build it once, and a later run or another process reads it; the
retrieve stage's output is cached by the flow like every path's. Online: search.py. The stage's rankings carry the graph's
build seconds and its statistics (nodes, edges, mean degree), which the manifest records.

Sharding: NPMI needs every chunk's co-occurrences and PageRank the whole graph, so the path
declares no Sharding and `runner.shards` > 1 with it is refused in one line
(shards.shard_refusal).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Sequence

from ablate.components.contract.config import PipelineConfig, RetrievalConfig
from ablate.components.contract.records import Chunk, Question, Ranking
from ablate.components.retrieval import array_folder
from ablate.components.retrieval.graph import stored
from ablate.components.retrieval.graph.build import KnowledgeGraph, build_graph
from ablate.components.retrieval.graph.nodes import NODE_EXTRACTORS
from ablate.components.retrieval.graph.search import search
from ablate.components.retrieval.graph.spread import SPREADING
from ablate.components.retrieval.indexes import LRU, chunks_fingerprint, disk_key
from ablate.components.retrieval.latency import IndexedRankings
from ablate.components.retrieval.lexical.analyzer import Analyzer, get_analyzer
from ablate.components.retrieval.lexical.analyzers_zh import choose_analyzer
from ablate.components.retrieval.resources import Resources
from ablate.components.retrieval.stages import PATHS

_GRAPHS = LRU(2)


def graph_of(chunks: Sequence[Chunk], r: RetrievalConfig, folder: Path | None = None
             ) -> tuple[KnowledgeGraph, Analyzer]:
    """The graph of `chunks` under `r` (memoised) and the analyzer its names come from
    (`auto` resolved from the chunk texts, as the bm25 path does). With `folder` (the
    cache's index folder), the graph is kept there on disk (graph/stored.py) and read back
    by any later call, in this process or another, with the same chunks and settings."""
    name = r.analyzer
    if name == "auto":
        name = choose_analyzer([c.text for c in chunks])[0]
    analyzer = get_analyzer(name, r.analyzer_options)
    g = r.graph
    extractor = NODE_EXTRACTORS.declaration(g.extractor).identity
    key = (chunks_fingerprint(chunks), name, tuple(sorted(r.analyzer_options.items())),
           extractor, g.max_df, g.min_pmi, g.min_count)

    def build() -> KnowledgeGraph:
        return build_graph(chunks, NODE_EXTRACTORS.get(g.extractor), analyzer, g)

    def make() -> KnowledgeGraph:
        if folder is None:
            return build()
        where = Path(folder) / f"graph-{disk_key(stored.FORMAT, key, r.analyzer_options)}"
        return array_folder.kept(where, stored.load, build, stored.save)

    return _GRAPHS.get_or_make(key, make), analyzer


@PATHS.register("graph", reads=("retrieval.depth", "retrieval.graph.max_df",
                                "retrieval.graph.min_pmi", "retrieval.graph.min_count"),
                uses={"retrieval.analyzer": "analyzer",
                      "retrieval.graph.extractor": "graph node extractor",
                      "retrieval.graph.spreading": "graph spreading"},
                latency="batch_mean")  # questions are searched in blocks: batch / n
def graph_path(chunks: Sequence[Chunk], questions: Sequence[Question], cfg: PipelineConfig,
               res: Resources, latency: dict[str, float] | None) -> dict[str, Ranking]:
    r = cfg.retrieval
    graph, analyzer = graph_of(chunks, r, res.index_dir)
    t0 = time.perf_counter()
    queries = [analyzer(q.question) for q in questions]
    found = search(graph, queries, r.depth, SPREADING.get(r.graph.spreading), r.graph)
    each = (time.perf_counter() - t0) / max(len(questions), 1)
    if latency is not None:
        latency.update({q.qid: each for q in questions})
    return IndexedRankings({q.qid: f for q, f in zip(questions, found)},
                           build_s=graph.build_s, search_s=each, stats=graph.stats())
