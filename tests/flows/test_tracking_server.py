"""MLflow tracking against a real `mlflow server` on a free localhost port: one parent,
its children, flat params, grouped metrics, the data set input, artifacts, and no
duplicates when the same sweep is logged again."""

from __future__ import annotations

import os
import sys

import pytest

from tests.components.report.synthetic import make_sweep
from tests.servers import free_port, serve


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mlflow-server")
    port = free_port()
    uri = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", f"sqlite:///{tmp}/m.db",
           "--default-artifact-root", str(tmp / "art"), "--host", "127.0.0.1", "--port", str(port),
           "--workers", "1"]
    with serve(cmd, uri + "/health", tmp / "server.log", 120,
               env={**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true"}):
        yield uri


@pytest.fixture(scope="module")
def logged(server, tmp_path_factory):
    from flows.tracking import log_sweep
    folder = make_sweep(tmp_path_factory.mktemp("sweep") / "s")
    (folder / "report.md").write_text("# report\n")
    return folder, log_sweep(folder, server, flow_run_id="flow-123")


def test_search_runs_finds_parent_children_params_metrics(server, logged):
    from mlflow.tracking import MlflowClient
    _, out = logged
    client = MlflowClient(tracking_uri=server)
    exp = client.get_experiment_by_name("synthetic")
    parents = client.search_runs([exp.experiment_id], "tags.`ablate.role` = 'parent'")
    assert len(parents) == 1 and parents[0].info.run_id == out["parent"]
    p = parents[0].data
    assert p.tags["sweep_id"] == "synthetic-0123456789" and p.tags["git_sha"] == "abc123"
    assert p.tags["prefect_flow_run_id"] == "flow-123" and p.tags["ablate_version"] == "0.1.0"
    assert p.tags["dataset_fingerprint"] == "sha256:" + "ab" * 32
    assert "chunking.size=64** lowers (worse) final/recall_at_5" in p.tags["mlflow.note.content"]
    children = client.search_runs([exp.experiment_id],
                                  f"tags.`mlflow.parentRunId` = '{out['parent']}'")
    by_name = {c.info.run_name: c.data for c in children}
    assert set(by_name) == {"baseline", "chunking.size=64", "fusion.rrf_k=10"}
    small = by_name["chunking.size=64"]
    assert small.params["chunking.size"] == "64" and by_name["baseline"].params["chunking.size"] == "256"
    assert small.params["fusion.rrf_k"] == "60" and small.params["retrieval.bm25.k1"] == "1.5"
    assert small.tags["ablation.variable"] == "chunking.size" and small.tags["ablation.value"] == "64"
    assert small.tags["baseline"] == "false" and by_name["baseline"].tags["baseline"] == "true"
    assert small.tags["config_id"] == "c1chunk64"
    assert small.metrics["delta/final/recall_at_5"] < -0.2
    assert small.metrics["ci_low/final/recall_at_5"] < small.metrics["ci_high/final/recall_at_5"] < 0
    assert "p_adj/final/recall_at_5" in small.metrics and "latency/generate" in small.metrics
    assert abs(small.metrics["final/recall_at_5"] - by_name["baseline"].metrics["final/recall_at_5"]
               - small.metrics["delta/final/recall_at_5"]) < 1e-9
    assert "delta/answer/f1" not in by_name["baseline"].metrics


def test_dataset_input_and_artifacts(server, logged):
    from mlflow.tracking import MlflowClient
    _, out = logged
    client = MlflowClient(tracking_uri=server)
    run = client.get_run(out["children"]["baseline"])
    (ds,) = run.inputs.dataset_inputs
    assert ds.dataset.digest == ("ab" * 32)[:36] and "sha256:" + "ab" * 32 in ds.dataset.profile
    assert {a.path for a in client.list_artifacts(run.info.run_id)} == {"per_query.parquet", "config.json"}
    parent = {a.path for a in client.list_artifacts(out["parent"])}
    assert {"report.md", "stats.parquet", "manifest.json"} <= parent


def test_logging_again_creates_no_duplicates(server, logged):
    from mlflow.tracking import MlflowClient
    from flows.tracking import log_sweep
    folder, out = logged
    again = log_sweep(folder, server)
    assert again == out
    client = MlflowClient(tracking_uri=server)
    runs = client.search_runs([out["experiment_id"]])
    assert len(runs) == 4
    assert len(client.get_metric_history(out["children"]["baseline"], "answer/f1")) == 1
    assert len(client.get_run(out["parent"]).inputs.dataset_inputs) == 1


def test_batches_stay_within_mlflow_limits():
    from mlflow.entities import Metric, Param, RunTag
    from flows.tracking import batches
    params = [Param(f"p{i}", "1") for i in range(250)]
    metrics = [Metric(f"m{i}", 1.0, 0, 0) for i in range(2500)]
    tags = [RunTag(f"t{i}", "1") for i in range(30)]
    calls = list(batches(params, metrics, tags))
    assert all(len(p) <= 100 and len(t) <= 100 and len(m) <= 1000 and len(p) + len(m) + len(t) <= 1000
               for p, m, t in calls)
    assert sum(len(p) for p, _, _ in calls) == 250 and sum(len(m) for _, m, _ in calls) == 2500
    assert sum(len(t) for _, _, t in calls) == 30
