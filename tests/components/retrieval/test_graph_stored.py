"""The knowledge graph kept on disk (graph/stored.py): read back whole and equal, used by a
later call instead of a build, and built again when its folder is damaged."""

from __future__ import annotations

import numpy as np

from ablate.components.retrieval.graph import path as graph_path
from ablate.components.retrieval.graph import stored
from ablate.components.retrieval.graph.path import graph_of
from tests.components.retrieval.test_graph_path import BORN, CHUNKS, cfg, ranked


def _same(a, b) -> None:
    assert a.chunk_ids == b.chunk_ids and a.nodes == b.nodes and a.build_s == b.build_s
    for m in stored.MATRICES:
        x, y = getattr(a, m), getattr(b, m)
        assert x.shape == y.shape and np.array_equal(x.toarray(), y.toarray())


def test_a_saved_graph_reads_back_equal(tmp_path):
    graph, _ = graph_of(CHUNKS, cfg().retrieval)
    stored.save(graph, tmp_path / "g")
    back = stored.load(tmp_path / "g")
    assert back is not None
    _same(graph, back)
    assert back.stats() == graph.stats()


def test_a_later_call_reads_the_graph_from_the_index_folder(tmp_path, monkeypatch):
    r = cfg().retrieval
    before = ranked(cfg())
    graph_path._GRAPHS.clear()  # built in this test, not memoised by another
    first, _ = graph_of(CHUNKS, r, tmp_path)
    assert len(list(tmp_path.glob("graph-*"))) == 1
    graph_path._GRAPHS.clear()  # a new process: nothing memoised

    def no_build(*a, **k):
        raise AssertionError("built again although the index folder holds the graph")
    monkeypatch.setattr(graph_path, "build_graph", no_build)
    again, _ = graph_of(CHUNKS, r, tmp_path)
    _same(first, again)
    from ablate.components.retrieval.graph.search import search
    from ablate.components.retrieval.graph.spread import SPREADING
    from ablate.components.retrieval.lexical.analyzer import get_analyzer
    found = search(again, [get_analyzer("default", {})(BORN.question)], r.depth,
                   SPREADING.get(r.graph.spreading), r.graph)[0]
    assert [c for c, _ in found] == [c for c, _ in before]


def test_a_damaged_graph_folder_is_built_again(tmp_path):
    r = cfg().retrieval
    graph_path._GRAPHS.clear()
    graph_of(CHUNKS, r, tmp_path)
    (folder,) = tmp_path.glob("graph-*")
    data = folder / "adjacency_data.npy"
    raw = bytearray(data.read_bytes())
    raw[-8:] = bytes(b ^ 0xFF for b in raw[-8:])
    data.write_bytes(bytes(raw))
    assert stored.load(folder) is None
    graph_path._GRAPHS.clear()
    rebuilt, _ = graph_of(CHUNKS, r, tmp_path)
    assert stored.load(folder) is not None  # the damaged folder was replaced
    assert rebuilt.stats()["edges"] == graph_of(CHUNKS, r)[0].stats()["edges"]
