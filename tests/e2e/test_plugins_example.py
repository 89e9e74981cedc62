"""The example plugins (examples/plugins/) sweep through the real flow like built-ins:
the TF-IDF path is retrieved, fused and cached; the plugin metric is a per-question
column with paired statistics and an MLflow metric."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def _restore():
    from tests.conftest import registries_restored
    with registries_restored():
        yield


@pytest.fixture(scope="module")
def sweep(prefect_server, tmp_path_factory, shared_cache):
    from ablate.flows.run.context import forget_contexts
    from ablate.flows.sweep import run_sweep
    tmp = tmp_path_factory.mktemp("plugins")
    forget_contexts()
    uri = f"sqlite:///{tmp / 'mlflow.db'}"
    result = run_sweep(str(ROOT / "examples/plugins/experiment.yaml"), out=str(tmp / "runs"),
                       cache_dir=str(shared_cache), tracking_uri=uri,
                       artifact_root=(tmp / "artifacts").as_uri(), mlflow=True)
    return result, uri


def test_plugin_path_and_metric_in_outputs(sweep):
    out = Path(sweep[0]["sweep_dir"])
    per_query = pl.read_parquet(out / "per_query.parquet")
    assert set(per_query["variant"]) == {"baseline", "retrieval.paths=tfidf",
                                         "retrieval.paths=bm25", "options.tfidf.ngram_max=2"}
    assert "answer/contains_gold" in per_query.columns
    answerable = per_query.filter(pl.col("answerable") & (pl.col("answer/refused") == 0))
    assert answerable["answer/contains_gold"].is_not_nan().all()
    assert answerable["answer/contains_gold"].sum() > 0
    stats = pl.read_parquet(out / "stats.parquet")
    assert stats.filter(pl.col("metric") == "answer/contains_gold").height == 3
    # the tfidf path really ran: its candidates differ from bm25's on some question
    tfidf = per_query.filter(pl.col("variant") == "retrieval.paths=tfidf")["candidates/ndcg_at_10"]
    bm25 = per_query.filter(pl.col("variant") == "retrieval.paths=bm25")["candidates/ndcg_at_10"]
    assert (tfidf.fill_nan(-1) != bm25.fill_nan(-1)).any()
    # the plugin's option is part of its stage key, and of nothing else's
    keys = {v["name"]: v["stage_keys"] for v in json.loads((out / "variants.json").read_text())}
    ngram, base = keys["options.tfidf.ngram_max=2"], keys["baseline"]
    assert ngram["retrieve:tfidf"] != base["retrieve:tfidf"]
    assert ngram["retrieve:bm25"] == base["retrieve:bm25"] and ngram["chunk"] == base["chunk"]


def test_plugin_metric_logged_to_mlflow(sweep):
    from mlflow.tracking import MlflowClient
    result, uri = sweep
    client = MlflowClient(tracking_uri=uri)
    child = client.get_run(result["mlflow"]["children"]["retrieval.paths=tfidf"])
    assert "answer/contains_gold" in child.data.metrics
    assert child.data.params["retrieval.paths"] == "['tfidf']" or "tfidf" in child.data.params["retrieval.paths"]
