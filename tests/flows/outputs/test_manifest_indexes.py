"""The manifest's `retrieval_indexes`: the statistics each retrieve stage's index recorded
(the graph path's nodes, edges, mean degree, build seconds), read from the stored
frames; stages without any (bm25) and stages not stored are left out."""

from __future__ import annotations

from types import SimpleNamespace

from ablate.components.retrieval.latency import IndexedRankings
from ablate.flows.outputs.manifest import retrieval_indexes
from ablate.flows.run.frames import rankings_frame

STATS = {"chunks": 3, "nodes": 4, "edges": 2, "mean_degree": 1.0, "build_s": 0.01}


class Store:
    def __init__(self, frames):
        self.frames = frames

    def stored_complete(self, stage, key):
        return key in self.frames

    def read(self, stage, key):
        return self.frames[key]


def test_retrieval_indexes_records_each_stage_s_statistics():
    graph = rankings_frame(IndexedRankings({"q1": [("c1", 1.0)]}, build_s=0.01, search_s=0.001,
                                           stats=STATS), {"q1": 0.001})
    bm25 = rankings_frame({"q1": [("c1", 2.0)]}, {"q1": 0.001})
    nodes = {"g" * 12: SimpleNamespace(stage="retrieve", label="retrieve:graph"),
             "b" * 12: SimpleNamespace(stage="retrieve", label="retrieve:bm25"),
             "m" * 12: SimpleNamespace(stage="retrieve", label="retrieve:graph"),  # not stored
             "f" * 12: SimpleNamespace(stage="fuse", label="fuse")}
    ctx = SimpleNamespace(plan=SimpleNamespace(nodes=nodes),
                          store=Store({"g" * 12: graph, "b" * 12: bm25, "f" * 12: bm25}))
    assert retrieval_indexes(ctx) == {"retrieve:graph gggggggggg": STATS}
