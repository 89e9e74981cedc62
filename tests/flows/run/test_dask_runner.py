"""`runner: dask` runs the stage tasks in Dask worker processes on a local cluster and gives
byte-identical results to the thread runner."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.specs import pipeline, vary, write_experiment


def _spec(folder: Path, kind: str) -> Path:
    return write_experiment(
        folder, "dask-tiny", smoke_size=16, seed=5,
        metrics={"ks": [1, 3], "key": ["final/recall_at_3", "answer/f1"]},
        stats={"resamples": 500, "bootstrap_resamples": 200},
        runner={"kind": kind, "workers": 2},
        baseline=pipeline(retrieval={"paths": ["bm25", "dense"], "depth": 10}, generator=None),
        sweeps=[vary("fusion.rrf_k", 5)])


@pytest.mark.slow
def test_dask_local_cluster_matches_threads(prefect_server, tmp_path, shared_cache):
    from ablate.flows.run.context import RunOptions, forget_contexts, get_context
    from ablate.flows.sweep import run_sweep
    forget_contexts()
    threads = run_sweep(str(_spec(tmp_path / "t", "threads")), out=str(tmp_path / "runs-t"),
                        cache_dir=str(shared_cache), mlflow=False)
    dask_cache = tmp_path / "dask-cache"  # cold: every stage must run in a worker
    spec = _spec(tmp_path / "d", "dask")
    dask = run_sweep(str(spec), out=str(tmp_path / "runs-d"), cache_dir=str(dask_cache),
                     mlflow=False)
    t_dir, d_dir = Path(threads["sweep_dir"]), Path(dask["sweep_dir"])
    assert (d_dir / "per_query.parquet").read_bytes() == (t_dir / "per_query.parquet").read_bytes()
    assert (d_dir / "stats.parquet").read_bytes() == (t_dir / "stats.parquet").read_bytes()
    # Every planned stage is stored and ran in a Dask worker process, not in this (the
    # flow's) process; the workers' counts still reach the manifest.
    ctx = get_context(str(spec.resolve()), RunOptions(cache_dir=str(dask_cache.resolve())))
    assert all(ctx.store.has(n.stage, n.key) for n in ctx.plan.nodes.values())
    assert dask["stage_pids"] and os.getpid() not in dask["stage_pids"]
    assert threads["stage_pids"] == [os.getpid()]
    run = json.loads((d_dir / "manifest.json").read_text())["stages"]["run"]
    assert sum(c["computed"] for c in run.values()) == len(ctx.plan.nodes)
