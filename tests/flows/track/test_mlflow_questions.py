"""MLflow carries the per-question evidence: each child a table of its questions (id,
cluster, the baseline's and its own value per key metric, where the runs diverge, the
buckets) that the UI's artifact view shows, logged once however often the sweep is synced;
the parent the report, its appendix and the overview plot. A SQLite store (no server)."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest

from tests.components.report.synthetic import KEY, make_sweep


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    from ablate.components.report.build import build_report, write_files
    from ablate.components.report.sweep_data import load_sweep
    from ablate.flows.track.tracking import log_sweep
    tmp = tmp_path_factory.mktemp("mlq")
    folder = make_sweep(tmp / "s")
    write_files(folder, build_report(load_sweep(folder)))
    uri = f"sqlite:///{tmp / 'm.db'}"
    out = log_sweep(folder, uri, artifact_root=(tmp / "art").as_uri())
    return folder, uri, out


def _table(client, rid, tmp_path) -> pl.DataFrame:
    path = client.download_artifacts(rid, "questions.json", str(tmp_path))
    doc = json.loads(open(path).read())
    return pl.DataFrame([dict(zip(doc["columns"], row)) for row in doc["data"]])


def test_each_child_has_its_per_question_table(logged, tmp_path):
    from mlflow.tracking import MlflowClient
    folder, uri, out = logged
    client = MlflowClient(tracking_uri=uri)
    pq = pl.read_parquet(folder / "per_query.parquet")
    table = _table(client, out["children"]["chunking.size=64"], tmp_path / "a")
    assert table.columns[:2] == ["qid", "cluster"]
    assert {f"{m} {who}" for m in KEY for who in ("baseline", "variant")} <= set(table.columns)
    assert {"diverges at", "bucket baseline", "bucket variant"} <= set(table.columns)
    var = dict(pq.filter(pl.col("variant") == "chunking.size=64").select("qid", KEY[0]).iter_rows())
    base = dict(pq.filter(pl.col("variant") == "baseline").select("qid", KEY[0]).iter_rows())
    assert sorted(table["qid"].to_list()) == sorted(var)
    for r in table.iter_rows(named=True):
        for got, want in ((r[f"{KEY[0]} variant"], var[r["qid"]]), (r[f"{KEY[0]} baseline"], base[r["qid"]])):
            assert (got is None or math.isnan(got)) if want is None or math.isnan(want) \
                else abs(got - want) < 1e-9  # MLflow writes 10 decimals
    # the recall changes on every answerable question: the final context diverges there
    changed = [r for r in table.iter_rows(named=True) if r[f"{KEY[0]} variant"] is not None
               and not math.isnan(r[f"{KEY[0]} variant"])]
    assert changed and all(r["diverges at"] != "none" for r in changed)
    base_table = _table(client, out["children"]["baseline"], tmp_path / "b")
    assert set(KEY) <= set(base_table.columns) and "diverges at" not in base_table.columns


def test_parent_has_report_appendix_and_overview_plot(logged):
    from mlflow.tracking import MlflowClient
    _, uri, out = logged
    client = MlflowClient(tracking_uri=uri)
    top = {a.path for a in client.list_artifacts(out["parent"])}
    assert {"report.md", "report.html", "report-appendix.md", "report-appendix.html"} <= top
    assert "plots/overview.svg" in {a.path for a in client.list_artifacts(out["parent"], "plots")}


def test_syncing_again_does_not_append_rows(logged, tmp_path):
    from mlflow.tracking import MlflowClient

    from ablate.flows.track.tracking import log_sweep
    folder, uri, out = logged
    assert log_sweep(folder, uri) == out
    client = MlflowClient(tracking_uri=uri)
    assert _table(client, out["children"]["chunking.size=64"], tmp_path).height == 30
