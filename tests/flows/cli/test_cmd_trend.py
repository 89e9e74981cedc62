"""`ablate trend EXPERIMENT` through the real CLI entry point, on hand-made runs under an
output root (tests/components/report/trend_runs.py): by the experiment's name or its
file, the table printed, trend.parquet and trend.html written beside the runs (or in
--out) and nothing else left there; bad input (no runs of that experiment, an unknown
metric or variant, a file without a name) one line, exit 2."""

from __future__ import annotations

import polars as pl

from tests.components.report.diff_folders import make_run
from tests.components.report.trend_runs import rename, series


def test_trend_by_name_and_file(tmp_path, run_cli, capsys, monkeypatch):
    root = tmp_path / "runs"
    series(root, chinese=True, experiment="夜间评测")
    rename(make_run(root / "other", created="2026-03-04T00:00:00Z"), "another")
    before = sorted(p.name for p in root.iterdir())
    assert run_cli("trend", "夜间评测", "--runs", str(root)) == 0
    printed = capsys.readouterr().out
    assert "夜间评测: 3 runs of variant baseline" in printed and "WORSE" in printed
    assert f"wrote {root / 'trend.parquet'}" in printed
    assert sorted(p.name for p in root.iterdir()) == sorted(before + ["trend.html", "trend.parquet"])
    table = pl.read_parquet(root / "trend.parquet")
    assert table["run"].unique().sort().to_list() == [1, 2, 3]
    assert table.filter(metric="final/recall_at_5")["verdict"].to_list()[2] == "worse"
    page = (root / "trend.html").read_text(encoding="utf-8")
    assert "夜间评测" in page and "<script" not in page

    spec = tmp_path / "nightly.yaml"
    spec.write_text("name: 夜间评测\nout: runs\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # the spec's `out` is relative to where ablate runs, as for `ablate run`
    out = tmp_path / "elsewhere"
    assert run_cli("trend", str(spec), "--out", str(out), "--metric", "answer/f1") == 0
    t2 = pl.read_parquet(out / "trend.parquet")
    assert t2["metric"].unique().to_list() == ["answer/f1"]
    assert sorted(p.name for p in out.iterdir()) == ["trend.html", "trend.parquet"]


def test_bad_input_is_one_line_exit_2(tmp_path, run_cli, capsys):
    root = tmp_path / "runs"
    series(root)
    nameless = tmp_path / "nameless.yaml"
    nameless.write_text("out: runs\n", encoding="utf-8")
    cases = [(("nightly", "--runs", str(root)), "no recorded runs of experiment 'nightly'"),
             (("diff-demo", "--runs", str(tmp_path / "nowhere")), "no recorded runs"),
             (("diff-demo", "--runs", str(root), "--metric", "answer/f2"), "unknown metric 'answer/f2'"),
             (("diff-demo", "--runs", str(root), "--variant", "nope"), "no variant 'nope'"),
             ((str(nameless),), "name"),
             ((str(tmp_path / "missing.yaml"),), "no such experiment file")]
    for argv, why in cases:
        capsys.readouterr()
        assert run_cli("trend", *argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("ablate: error: "), err
        assert why in err[0], err
    assert not (root / "trend.parquet").exists()
