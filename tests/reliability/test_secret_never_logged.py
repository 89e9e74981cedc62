"""An API key in the environment never appears in MLflow params, tags, metrics, artifacts,
the sweep folder, the cache, Prefect logs or anything printed: a real sweep with the
`openai` generator against a real `python -m llama_cpp.server` that demands the key."""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

import pytest

from tests.servers import llama_server
from tests.specs import FAST_STATS, pipeline, vary, write_experiment

pytestmark = pytest.mark.slow

SECRET = f"sk-ablate-rel-{uuid.uuid4().hex}"
ENV = "ABLATE_REL_SECRET_KEY"


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory):
    with llama_server(SECRET, tmp_path_factory.mktemp("llama_secret") / "server.log") as base:
        yield base


def _files_with(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_api_key_never_logged(prefect_server, keyed_server, tmp_path, monkeypatch, capfd, caplog):
    import polars as pl
    from mlflow.tracking import MlflowClient
    from prefect.client.orchestration import get_client

    from ablate.flows.run.context import forget_contexts
    from ablate.flows.sweep import run_sweep
    monkeypatch.setenv(ENV, SECRET)
    caplog.set_level(logging.DEBUG)
    spec = write_experiment(
        tmp_path, "rel-secret", smoke_size=4, seed=1,
        metrics={"ks": [1, 3], "key": ["final/recall_at_3", "answer/f1"]}, stats=FAST_STATS,
        baseline=pipeline(retrieval={"paths": ["bm25"], "depth": 5}, rerank=None, generator={
            "name": "openai", "base_url": keyed_server, "model": "smollm2", "api_key_env": ENV,
            "max_new_tokens": 6, "concurrency": 2, "timeout_s": 60, "max_retries": 1}),
        sweeps=[vary("fusion.rrf_k", 5)])
    db = tmp_path / "mlflow.db"
    forget_contexts()
    result = run_sweep(str(spec), out=str(tmp_path / "runs"), cache_dir=str(tmp_path / "cache"),
                       tracking_uri=f"sqlite:///{db}", artifact_root=(tmp_path / "art").as_uri(),
                       mlflow=True)
    forget_contexts()
    assert result["mlflow"] and not result.get("mlflow_error"), result
    out = Path(result["sweep_dir"])
    # the key was really used: the server demands it, and every answer came back
    answers = pl.read_parquet(out / "per_query.parquet")
    assert answers.height == 8
    gens = list((tmp_path / "cache" / "generate").rglob("*.parquet"))
    assert gens and all(pl.read_parquet(g)["error"].null_count() == 4 for g in gens)

    needle = SECRET.encode()
    assert db.is_file() and needle not in db.read_bytes()
    for folder in (tmp_path / "art", out, tmp_path / "cache"):
        assert folder.is_dir() and _files_with(folder, needle) == [], folder
    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    runs = client.search_runs([client.get_experiment_by_name("rel-secret").experiment_id])
    assert len(runs) == 3
    for r in runs:
        blob = repr((r.data.params, r.data.tags, r.data.metrics, r.info))
        assert SECRET not in blob
        assert r.data.params.get("generator.api_key_env", ENV) == ENV  # the name, not the value
    with get_client(sync_client=True) as pc:
        logs = pc.read_logs(limit=200, offset=0)
        while len(logs) % 200 == 0 and logs:
            more = pc.read_logs(limit=200, offset=len(logs))
            if not more:
                break
            logs += more
    assert logs and not any(SECRET in (log.message or "") for log in logs)
    printed = capfd.readouterr()
    assert SECRET not in printed.out and SECRET not in printed.err
    assert SECRET not in caplog.text and "rel-secret" in caplog.text + printed.out + printed.err
