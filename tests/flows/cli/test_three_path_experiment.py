"""The shipped three-path experiment (experiments/three-path.yaml) passes `ablate check`:
its bundled HotpotQA sample loads, the graph path and its settings validate, every
variant of the matrix is planned, and its slice columns (type, level, query_kind) exist."""

from __future__ import annotations

from tests.conftest import ROOT

SPEC = ROOT / "experiments" / "three-path.yaml"


def test_three_path_experiment_checks(run_cli, capsys, tmp_path):
    code = run_cli("check", str(SPEC), "--cache-dir", str(tmp_path / "cache"))
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "994 documents, 100 questions" in out
    for name in ("minus-graph", "minus-bm25", "vector-only", "graph-only", "bm25-only"):
        assert f"  {name}  (line " in out
    assert "retrieve 3 " in out  # bm25, dense, graph: each retrieved once for the matrix
    assert "no selected question has" not in out
