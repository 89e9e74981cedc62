"""Kill -9 a running `ablate run` at several points (during chunking, retrieval,
generation and MLflow logging), running the same command again each time: the sweep
finishes, recomputing only what was missing, with results byte-identical to an
uninterrupted run and one MLflow child run per variant.

Real `ablate` processes, each started as a user would from a project folder (a copy of
prefect.toml, so each starts its own temporary Prefect server and keeps its MLflow store
and cache under .ablate/): a clean run, then in a second folder four runs killed at
successive points and a final run that completes.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.specs import experiment, pipeline, vary

SPEC = experiment(
    "kill-tiny", smoke_size=24, seed=7,
    metrics={"ks": [1, 3, 5], "key": ["final/recall_at_3", "answer/f1"]},
    stats={"resamples": 1000, "bootstrap_resamples": 500},
    baseline=pipeline(retrieval={"paths": ["bm25", "dense"], "depth": 10}, generator=None),
    sweeps=[vary("fusion.rrf_k", 5, 500), vary("chunking.size", 64)])
N_VARIANTS = 4
TIMEOUT = 600


def _project(folder: Path) -> Path:
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "prefect.toml", folder / "prefect.toml")
    (folder / "exp.yaml").write_text(SPEC)
    return folder


def _start(project: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "MLFLOW_"))}
    env["HF_HUB_OFFLINE"] = "1"
    ablate = Path(sys.executable).with_name("ablate")
    return subprocess.Popen([str(ablate), "run", "exp.yaml"], cwd=project, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)  # its own group: the server dies with it


def _finish(proc: subprocess.Popen) -> str:
    try:
        out, _ = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
    assert proc.returncode == 0, out[-4000:]
    return out


def _complete(cache: Path) -> dict[str, set[str]]:
    """Stage -> keys of complete entries (data and checksum both present)."""
    out: dict[str, set[str]] = {}
    for check in cache.glob("*/*/*.sha256"):
        if check.with_suffix(".parquet").exists():
            out.setdefault(check.parts[-3], set()).add(check.stem)
    return out


def _sweep_dir(project: Path) -> Path:
    (found,) = (project / "runs").glob("kill-tiny-*")
    return found


def _mlflow_runs(db: Path) -> int:
    """Runs in the MLflow SQLite store (0 while it does not exist or is being created)."""
    import sqlite3
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.05) as con:
            return con.execute("select count(*) from runs").fetchone()[0]
    except sqlite3.Error:
        return 0


def _kill_when(proc: subprocess.Popen, ready, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not ready():
        assert proc.poll() is None, f"the sweep ended before it could be killed {what}"
        assert time.monotonic() < deadline, f"never reached the point {what}"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)  # the whole group, temporary Prefect server included
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL, f"the sweep finished before it was killed {what}"


@pytest.mark.slow
def test_killed_sweep_resumes_to_identical_results(tmp_path):
    clean, killed = _project(tmp_path / "clean"), _project(tmp_path / "killed")
    _finish(_start(clean))
    cache, db = killed / ".ablate" / "cache", killed / ".ablate" / "mlflow.db"
    planned_total = sum(json.loads((_sweep_dir(clean) / "manifest.json").read_text())
                        ["stages"]["planned"].values())

    def grew(stage: str):
        before = len(_complete(cache).get(stage, ()))
        return lambda: len(_complete(cache).get(stage, ())) > before

    points = [("during chunking", lambda: grew("chunk")),
              ("during retrieval", lambda: grew("retrieve")),
              ("during generation", lambda: grew("generate")),
              ("during MLflow logging", lambda: (lambda: _mlflow_runs(db) >= 1))]
    for what, condition in points:
        stored = _complete(cache)  # what this run found: after the loop, the last killed run's
        proc = _start(killed)
        _kill_when(proc, condition(), what)
        if what == "during chunking":
            assert sum(map(len, _complete(cache).values())) < planned_total
    assert _mlflow_runs(db) < 1 + N_VARIANTS, "MLflow logging was not interrupted"
    assert _complete(cache) == _complete(clean / ".ablate" / "cache")  # every stage was stored

    out = _finish(_start(killed))
    # The run killed during MLflow logging had computed every stage and written the outputs,
    # so the final run recomputes nothing, keeps those outputs and only logs to MLflow.
    assert "Nothing changed" in out, out[-2000:]

    a, b = _sweep_dir(clean), _sweep_dir(killed)
    assert a.name == b.name
    for name in ("per_query.parquet", "stats.parquet"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    # The clean run computed each unique stage of this multi-variable sweep exactly once.
    clean_man = json.loads((a / "manifest.json").read_text())
    planned = clean_man["stages"]["planned"]
    assert {s: c["computed"] for s, c in clean_man["stages"]["run"].items()} == planned
    assert all(c["reused"] == 0 for c in clean_man["stages"]["run"].values())
    # The outputs' manifest is the last killed run's: it reused exactly what the runs killed
    # before it had stored and computed the rest.
    run = json.loads((b / "manifest.json").read_text())["stages"]["run"]
    for stage, n in planned.items():
        assert run[stage]["reused"] == len(stored.get(stage, ())), stage
        assert run[stage]["computed"] == n - len(stored.get(stage, ())), stage
    _assert_one_child_per_variant(db)


def _assert_one_child_per_variant(db: Path) -> None:
    from mlflow.tracking import MlflowClient
    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    exp = client.get_experiment_by_name("kill-tiny")
    runs = client.search_runs([exp.experiment_id])
    parents = [r for r in runs if r.data.tags.get("ablate.role") == "parent"]
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId")]
    assert len(parents) == 1 and len(runs) == 1 + N_VARIANTS
    assert sorted(c.data.tags["variant"] for c in children) == sorted(
        ["baseline", "fusion.rrf_k=5", "fusion.rrf_k=500", "chunking.size=64"])
