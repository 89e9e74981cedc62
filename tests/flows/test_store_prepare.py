"""The MLflow store made ready off the critical path: created complete or not at all,
on a side thread during the analysis; and the CLI's start imports no MLflow,
matplotlib or scipy.stats (they load only when an analysis, report or logging runs)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from flows import sweep, tracking

ROOT = Path(__file__).resolve().parents[2]


def test_prepare_store_creates_a_complete_store_once(tmp_path):
    db = tmp_path / "state" / "mlflow.db"
    uri = f"sqlite:///{db.as_posix()}"
    tracking.prepare_store(uri)
    assert db.is_file()
    assert sorted(p.name for p in db.parent.iterdir()) == ["mlflow.db", "mlflow.db.lock"]
    from mlflow.tracking import MlflowClient
    assert [e.name for e in MlflowClient(uri).search_experiments()] == ["Default"]
    before = db.stat().st_mtime_ns
    tracking.prepare_store(uri)  # exists: left alone
    assert db.stat().st_mtime_ns == before


def test_prepare_store_failing_midway_leaves_nothing(tmp_path, monkeypatch):
    db = tmp_path / "mlflow.db"

    class Broken:
        def __init__(self, tracking_uri):
            Path(tracking_uri[len("sqlite:///"):]).write_bytes(b"half a schema")
            raise RuntimeError("killed during the migrations")
    monkeypatch.setattr(tracking, "MlflowClient", Broken)
    with pytest.raises(RuntimeError):
        tracking.prepare_store(f"sqlite:///{db.as_posix()}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mlflow.db.lock"]


def test_store_opened_on_a_side_thread(tmp_path):
    db = tmp_path / "mlflow.db"
    uri = f"sqlite:///{db.as_posix()}"
    thread = sweep._open_store_in_background(uri)
    thread.join(timeout=300)
    assert not thread.is_alive() and db.is_file()
    sweep._open_store_in_background("http://127.0.0.1:9").join(timeout=60)  # nothing to open


def test_cli_start_imports_no_heavy_libraries():
    code = ("import sys; from flows.cli import build_app; import flows.sweep, flows.mlflow_links; "
            "build_app(); print(sorted(m for m in ('mlflow', 'matplotlib', 'scipy.stats', "
            "'torch', 'sentence_transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True).stdout
    assert out.strip() == "[]"
