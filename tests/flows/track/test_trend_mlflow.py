"""`ablate trend --tracking-uri`: the experiment's sweeps logged to MLflow (a SQLite store,
no server) join the local folders; a sweep found in both is read from its folder; a run
only in MLflow is labelled by its run id."""

from __future__ import annotations

import shutil

import polars as pl

from tests.components.report.trend_runs import series


def test_runs_from_mlflow_join_the_folders(tmp_path, run_cli, capsys):
    from ablate.flows.track.tracking import log_sweep
    root = tmp_path / "runs"
    folders = series(root, chinese=True, experiment="夜间评测")
    uri = f"sqlite:///{tmp_path / 'm.db'}"
    art = (tmp_path / "art").as_uri()
    first = log_sweep(folders[0], uri, artifact_root=art)
    log_sweep(folders[1], uri, artifact_root=art)
    shutil.rmtree(folders[0])  # the oldest run now only in MLflow
    capsys.readouterr()
    assert run_cli("trend", "夜间评测", "--runs", str(root), "--tracking-uri", uri) == 0
    out = capsys.readouterr().out
    table = pl.read_parquet(root / "trend.parquet").filter(metric="final/recall_at_5")
    assert table["label"].to_list() == [f"MLflow run {first['parent']}", str(folders[1]), str(folders[2])]
    assert table["verdict"].to_list() == [None, "not significant", "worse"]
    assert table["shared"].to_list() == [None, 30, 30]
    assert f"MLflow run {first['parent']}" in out

    capsys.readouterr()  # without the store: the two folders only
    assert run_cli("trend", "夜间评测", "--runs", str(root)) == 0
    assert pl.read_parquet(root / "trend.parquet")["run"].max() == 2
    capsys.readouterr()
    assert run_cli("trend", "nothing", "--runs", str(root), "--tracking-uri", uri) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no recorded runs of experiment 'nothing'" in err[0], err
