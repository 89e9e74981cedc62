"""Kill -9 a running `ablate run`, run the same command again: the sweep finishes,
recomputing only what was missing, with results byte-identical to an uninterrupted run
and one MLflow child run per variant.

Three real `ablate` processes, each started as a user would from a project folder (a copy
of prefect.toml, so each starts its own temporary Prefect server and keeps its MLflow
store and cache under .ablate/): a clean run, a run killed mid-sweep, and its re-run.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT

SPEC = """
name: kill-tiny
dataset: {{path: {data}, format: squad}}
smoke_size: 24
seed: 7
metrics: {{ks: [1, 3, 5], key: [final/recall_at_3, answer/f1]}}
stats: {{resamples: 1000, bootstrap_resamples: 500}}
baseline:
  chunking: {{size: 48, overlap: 8}}
  retrieval: {{paths: [bm25, dense], depth: 10}}
  rerank: {{depth: 5}}
  context: {{budget: 96}}
sweeps:
  - variable: fusion.rrf_k
    values: [5, 500]
  - variable: chunking.size
    values: [64]
"""
N_VARIANTS = 4
TIMEOUT = 600


def _project(folder: Path) -> Path:
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "prefect.toml", folder / "prefect.toml")
    (folder / "exp.yaml").write_text(textwrap.dedent(SPEC.format(data=FIXTURES / "squad_tiny.json")))
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


@pytest.mark.slow
def test_killed_sweep_resumes_to_identical_results(tmp_path):
    clean, killed = _project(tmp_path / "clean"), _project(tmp_path / "killed")
    _finish(_start(clean))

    proc = _start(killed)
    cache = killed / ".ablate" / "cache"
    deadline = time.monotonic() + TIMEOUT
    while not _complete(cache).get("generate") and proc.poll() is None:
        assert time.monotonic() < deadline, "no stage was stored in time"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)  # the whole group, temporary Prefect server included
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL, "the sweep finished before it was killed"
    assert not (killed / "runs").exists() or not list((killed / "runs").glob("kill-tiny-*"))
    stored = _complete(cache)

    _finish(_start(killed))

    a, b = _sweep_dir(clean), _sweep_dir(killed)
    assert a.name == b.name
    for name in ("per_query.parquet", "stats.parquet"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    # The clean run computed each unique stage of this multi-variable sweep exactly once.
    clean_man = json.loads((a / "manifest.json").read_text())
    planned = clean_man["stages"]["planned"]
    assert {s: c["computed"] for s, c in clean_man["stages"]["run"].items()} == planned
    assert all(c["reused"] == 0 for c in clean_man["stages"]["run"].values())
    # The re-run reused exactly what the killed run had stored and computed the rest.
    run = json.loads((b / "manifest.json").read_text())["stages"]["run"]
    for stage, n in planned.items():
        assert run[stage]["reused"] == len(stored.get(stage, ())), stage
        assert run[stage]["computed"] == n - len(stored.get(stage, ())), stage
    assert sum(c["computed"] for c in run.values()) > 0
    _assert_one_child_per_variant(killed / ".ablate" / "mlflow.db")


def _assert_one_child_per_variant(db: Path) -> None:
    from mlflow.tracking import MlflowClient
    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    exp = client.get_experiment_by_name("kill-tiny")
    runs = client.search_runs([exp.experiment_id])
    parents = [r for r in runs if r.data.tags.get("ablate.role") == "parent"]
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId")]
    assert len(parents) == 1 and len(runs) == 1 + N_VARIANTS
    assert sorted(c.info.run_name for c in children) == sorted(
        ["baseline", "fusion.rrf_k=5", "fusion.rrf_k=500", "chunking.size=64"])
