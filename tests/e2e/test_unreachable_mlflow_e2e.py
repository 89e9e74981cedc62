"""A real sweep while MLflow is unreachable: it finishes with every result on disk, says
so, publishes its Prefect artifacts, and `ablate sync` logs it later (idempotently)."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.e2e.test_sweep_e2e import FIELDS as E2E
from tests.specs import write_experiment


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_sweep_survives_unreachable_mlflow_then_sync(prefect_server, tmp_path, shared_cache,
                                                     monkeypatch):
    from mlflow.tracking import MlflowClient
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from ablate.flows.cli import main as cli
    from ablate.flows.run.context import forget_contexts
    from ablate.flows.sweep import run_sweep
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "2")
    spec = write_experiment(tmp_path, "e2e-offline", **E2E)  # own artifact keys
    forget_contexts()
    result = run_sweep(str(spec), out=str(tmp_path / "runs"), cache_dir=str(shared_cache),
                       tracking_uri=f"http://127.0.0.1:{_closed_port()}", mlflow=True)
    assert result["mlflow"] is None and "unreachable" in result["mlflow_error"]
    out = Path(result["sweep_dir"])
    for name in ("per_query.parquet", "stats.parquet", "report.md", "report.html",
                 "plots/buckets.svg"):
        assert (out / name).is_file(), name
    with get_client(sync_client=True) as client:
        arts = client.read_artifacts(artifact_filter=ArtifactFilter(
            key=ArtifactFilterKey(any_=["ablate-e2e-offline-summary", "ablate-e2e-offline-table"])))
    kinds = {a.type for a in arts}
    assert {"markdown", "table"} <= kinds
    md = next(a for a in arts if a.type == "markdown").data
    assert "## Findings" in md and "fusion.rrf_k" in md
    uri = f"sqlite:///{tmp_path / 'later.db'}"
    for _ in range(2):
        try:
            cli.main(["sync", str(out), "--tracking-uri", uri])
        except SystemExit as exc:
            assert not exc.code
    client = MlflowClient(tracking_uri=uri)
    runs = client.search_runs([client.get_experiment_by_name("e2e-offline").experiment_id])
    assert len(runs) == 5
