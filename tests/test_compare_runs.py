"""scripts/compare_runs.py: identical runs exit 0; a changed value exits 1 naming its column."""

from __future__ import annotations

import importlib.util

import polars as pl

from tests.conftest import ROOT


def _script():
    spec = importlib.util.spec_from_file_location("compare_runs", ROOT / "scripts" / "compare_runs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(folder, f1):
    folder.mkdir()
    pl.DataFrame({"qid": ["a", "b"], "answer/f1": f1}).write_parquet(folder / "per_query.parquet")
    pl.DataFrame({"metric": ["answer/f1"], "delta": [0.1]}).write_parquet(folder / "stats.parquet")
    return str(folder)


def test_identical_and_different_runs(tmp_path, capsys):
    compare = _script()
    a, b = _run(tmp_path / "a", [1.0, 0.5]), _run(tmp_path / "b", [1.0, 0.5])
    c = _run(tmp_path / "c", [1.0, 0.25])
    assert compare.main([a, b]) == 0
    assert compare.main([a, c]) == 1
    assert "per_query.parquet: columns answer/f1 differ" in capsys.readouterr().out
