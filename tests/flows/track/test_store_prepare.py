"""The MLflow store made ready off the critical path: created complete or not at all,
on a side thread once the model-bound stages are done; and the CLI's start imports no MLflow,
matplotlib or scipy.stats (they load only when an analysis, report or logging runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ablate.flows import sweep
from ablate.flows.track import mlflow_store
from tests.fresh import imported_after


def _rows(db: Path) -> list:
    import sqlite3
    con = sqlite3.connect(db)
    try:
        return sorted(r for t, in con.execute("select name from sqlite_master where type='table'")
                      for r in con.execute(f"select '{t}', * from '{t}'"))
    finally:
        con.close()


def _schema(db: Path) -> list:
    """Every table, index and trigger with its SQL as a sorted set of clause lines: MLflow's
    batch migrations rebuild some tables with their constraints in set order, which varies
    from run to run (it did in CI), so the order of a table's clauses is not compared."""
    import sqlite3
    con = sqlite3.connect(db)
    try:
        rows = con.execute("select type, name, sql from sqlite_master").fetchall()
    finally:
        con.close()
    return sorted((kind, name, tuple(sorted(line.strip().rstrip(",").strip()
                                            for line in (sql or "").splitlines())))
                  for kind, name, sql in rows)


def test_new_store_is_what_mlflow_makes(tmp_path, monkeypatch):
    """A store copied from the machine's template has MLflow's own schema and rows, the
    Default experiment's location and times set as MLflow sets them."""
    monkeypatch.setenv("ABLATE_STATE_HOME", str(tmp_path / "state"))
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # the template is made from another project
    first, second = tmp_path / "a" / "mlflow.db", tmp_path / "b" / "mlflow.db"
    mlflow_store.prepare_store(f"sqlite:///{first.as_posix()}")  # makes the template
    assert len(list((tmp_path / "state" / "mlflow-store").glob("mlflow-*.db"))) == 1
    monkeypatch.chdir(tmp_path)
    made = tmp_path / "by-mlflow.db"
    mlflow_store._migrate(made)
    mlflow_store.prepare_store(f"sqlite:///{second.as_posix()}")  # a copy of it
    assert sorted(p.name for p in second.parent.iterdir()) == ["mlflow.db", "mlflow.db.lock"]
    for db in (second,):
        assert _schema(db) == _schema(made)
        strip = [[v for i, v in enumerate(r) if not (r[0] == "experiments" and i in (5, 6))]
                 for r in _rows(db)]
        assert strip == [[v for i, v in enumerate(r)
                          if not (r[0] == "experiments" and i in (5, 6))] for r in _rows(made)]
    from mlflow.tracking import MlflowClient
    exp = MlflowClient(f"sqlite:///{second.as_posix()}").get_experiment("0")
    assert exp.name == "Default" and exp.artifact_location == str(tmp_path / "mlruns" / "0")
    before = second.stat().st_mtime_ns
    mlflow_store.prepare_store(f"sqlite:///{second.as_posix()}")  # exists: left alone
    assert second.stat().st_mtime_ns == before


def test_prepare_store_failing_midway_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("ABLATE_STATE_HOME", str(tmp_path / "state"))
    db = tmp_path / "mlflow.db"

    def broken(path):
        Path(path).write_bytes(b"half a schema")
        raise RuntimeError("killed during the migrations")
    monkeypatch.setattr(mlflow_store, "_migrate", broken)
    with pytest.raises(RuntimeError):
        mlflow_store.prepare_store(f"sqlite:///{db.as_posix()}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mlflow.db.lock", "state"]
    assert [p.name for p in (tmp_path / "state" / "mlflow-store").iterdir()] == [".lock"]


def test_store_opened_on_the_side_thread(tmp_path, monkeypatch):
    monkeypatch.setenv("ABLATE_STATE_HOME", str(tmp_path / "state"))
    db = tmp_path / "mlflow.db"
    uri = f"sqlite:///{db.as_posix()}"
    thread = sweep._prepare_in_background(uri)
    thread.join(timeout=300)
    assert not thread.is_alive() and db.is_file()
    sweep._prepare_in_background("http://127.0.0.1:9").join(timeout=60)  # nothing to open
    sweep._prepare_in_background(None).join(timeout=60)  # --no-mlflow: imports only


def test_cli_start_imports_no_heavy_libraries():
    code = ("from ablate.flows.cli.main import build_app; import ablate.flows.sweep, ablate.flows.track.mlflow_links; "
            "build_app()")
    assert imported_after(code, ("mlflow", "matplotlib", "scipy.stats", "torch",
                                 "sentence_transformers")) == []


def test_side_thread_imports_the_analysis_first():
    """Without a tracking URI (--no-mlflow) the side thread imports what the statistics and
    the report use, and no MLflow."""
    code = "from ablate.flows import sweep; sweep._prepare_in_background(None).join(300)"
    assert imported_after(code, ("mlflow", "matplotlib", "scipy.special",
                                 "ablate.components.report.build")) == [
        "ablate.components.report.build", "matplotlib", "scipy.special"]
