"""Two `ablate run` processes at once, sharing one cache folder and one MLflow store (and
one project folder, so one Prefect home): both finish, and nothing is corrupted."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import polars as pl

from tests.reliability.conftest import FIELDS, SPEC
from tests.specs import experiment, vary


def _env() -> dict[str, str]:
    """The caller's environment without Prefect/MLflow settings (each run starts its own
    temporary Prefect server, as from a shell)."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "MLFLOW_"))}


def test_two_sweeps_at_once_share_cache_and_mlflow(clean_run, tmp_path):
    from mlflow.tracking import MlflowClient

    from ablate.components.retrieval.lexical import bm25_disk
    from ablate.flows.run.store import SIDE_FOLDERS, Store, cache_files
    specs = {"a": SPEC, "b": experiment("rel-tiny-paths", **{
        **FIELDS, "sweeps": [vary("retrieval.paths", ["bm25"])]})}
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    # No store yet: both processes create it at once (mlflow_store.store_lock serialises them).
    assert not (tmp_path / "mlflow.db").exists()
    procs = {}
    for name, text in specs.items():
        (tmp_path / f"{name}.yaml").write_text(text)
        log = open(tmp_path / f"{name}.log", "wb")
        procs[name] = (subprocess.Popen(
            [sys.executable, "-m", "ablate.flows.cli.main", "run", f"{name}.yaml", "--out", "runs",
             "--cache-dir", "cache", "--tracking-uri", uri],
            cwd=tmp_path, env=_env(), stdout=log, stderr=subprocess.STDOUT), log)
    for name, (proc, log) in procs.items():
        code = proc.wait(timeout=600)
        log.close()
        assert code == 0, (tmp_path / f"{name}.log").read_text()[-3000:]

    dirs = {p.name.rsplit("-", 1)[0]: p for p in (tmp_path / "runs").iterdir()}
    assert sorted(dirs) == ["rel-tiny", "rel-tiny-paths"], sorted(dirs)
    # the same sweep as the clean run, computed alongside another: the same bytes
    assert (dirs["rel-tiny"] / "per_query.parquet").read_bytes() == clean_run.per_query
    assert (dirs["rel-tiny"] / "stats.parquet").read_bytes() == clean_run.stats
    other = pl.read_parquet(dirs["rel-tiny-paths"] / "per_query.parquet")
    assert set(other["variant"]) == {"baseline", "retrieval.paths=bm25"} and other.height == 32

    # every cache entry is complete and matches its checksum; no temporary files remain
    store = Store(tmp_path / "cache")
    files = list(cache_files(tmp_path / "cache"))
    assert files and all(f.kind == "entry" for f in files), [f for f in files if f.kind != "entry"]
    entries = [f for f in files if f.area not in SIDE_FOLDERS]
    for f in entries:
        assert store.has(f.area, f.path.stem), f.path
    for folder in (tmp_path / "cache" / "indexes").iterdir():  # BM25 indexes both built
        assert bm25_disk.load(folder) is not None, folder
    for shard in (tmp_path / "cache" / "embeddings").rglob("*.npz"):
        with np.load(shard) as z:
            assert len(z["keys"]) == z["vecs"].shape[0] > 0
    for sweep_dir in dirs.values():  # and each sweep's stages are all there
        for keys in (v["stage_keys"] for v in json.loads((sweep_dir / "variants.json").read_text())):
            for stage, key in keys.items():
                assert store.has(stage.split(":")[0], key), (stage, key)

    client = MlflowClient(tracking_uri=uri)
    for name in ("rel-tiny", "rel-tiny-paths"):
        runs = client.search_runs([client.get_experiment_by_name(name).experiment_id])
        parents = [r for r in runs if r.data.tags.get("ablate.role") == "parent"]
        children = [r for r in runs if r.data.tags.get("mlflow.parentRunId")]
        assert len(parents) == 1 and len(children) == 2, name
        assert all("final/recall_at_3" in c.data.metrics for c in children)
