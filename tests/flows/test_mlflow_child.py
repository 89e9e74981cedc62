"""MLflow logging in a child process (flows/mlflow_child.py): it logs what log_sweep logs,
reports log_sweep's errors with their type, logs nothing when let go, and a broken child
is an OSError the flow answers by logging in-process."""

from __future__ import annotations

import socket
import sys

import pytest

from flows import mlflow_child
from tests.components.report.synthetic import make_sweep


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_child_logs_the_sweep(tmp_path, monkeypatch):
    from mlflow.tracking import MlflowClient
    monkeypatch.setenv("ABLATE_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    folder = make_sweep(tmp_path / "sweep", extra=True)
    uri = f"sqlite:///{(tmp_path / 'mlflow.db').as_posix()}"
    child = mlflow_child.MlflowChild(uri, None, "flow-7")
    runs = child.log(str(folder))
    client = MlflowClient(tracking_uri=uri)
    parent = client.get_run(runs["parent"])
    assert parent.data.tags["prefect_flow_run_id"] == "flow-7"
    assert parent.data.tags["sweep_id"] == "synthetic-0123456789"
    kids = client.search_runs([runs["experiment_id"]],
                              f"tags.`mlflow.parentRunId` = '{runs['parent']}'")
    assert sorted(k.info.run_id for k in kids) == sorted(runs["children"].values())
    assert {k.info.run_name for k in kids} == {"baseline", "chunk=64", "rrf_k=10"}


def test_child_reports_the_error_with_its_type(tmp_path):
    folder = make_sweep(tmp_path / "sweep")
    child = mlflow_child.MlflowChild(f"http://127.0.0.1:{_closed_port()}", None, None)
    with pytest.raises(mlflow_child.ChildLoggingError) as err:
        child.log(str(folder))
    assert err.value.kind == "ConnectionError" and "unreachable" in str(err.value)


def test_child_let_go_logs_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("ABLATE_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    uri = f"sqlite:///{(tmp_path / 'mlflow.db').as_posix()}"
    child = mlflow_child.MlflowChild(uri, None, None)
    child.stop()
    assert child._proc.returncode == 0
    from mlflow.tracking import MlflowClient
    assert MlflowClient(tracking_uri=uri).search_runs(["0"]) == []  # opened, nothing logged


def test_broken_child_is_an_oserror(tmp_path):
    folder = make_sweep(tmp_path / "sweep")
    child = mlflow_child.MlflowChild(f"sqlite:///{(tmp_path / 'm.db').as_posix()}", None, None)
    child._proc.kill()
    child._proc.wait()
    with pytest.raises(OSError):
        child.log(str(folder))


def test_started_only_where_mlflow_is_not_imported(tmp_path, monkeypatch):
    import mlflow  # noqa: F401
    uri = f"sqlite:///{(tmp_path / 'm.db').as_posix()}"
    assert not mlflow_child.start(uri, None, None)  # imported here: log in-process
    assert mlflow_child.take(uri) is None
    monkeypatch.delitem(sys.modules, "mlflow")
    assert mlflow_child.start(uri, None, None)
    child = mlflow_child.take(uri)
    assert child is not None and mlflow_child.take(uri) is None
    child.stop()
