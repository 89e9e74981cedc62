"""The machine's Prefect server dies in the middle of a sweep (issue 40: another project
replaced it, or it was killed): the run still computes every stage and writes its outputs,
then ends with one `ablate: warning:` line and exit 0: no traceback, no Prefect retry lines.

A real `ablate run` process using the machine server (ABLATE_PREFECT_SERVER=machine) in a
temporary state folder; the test kills that server's process group after the third stage."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.specs import FAST_STATS, pipeline, vary, write_experiment

TIMEOUT = 600


def test_a_sweep_whose_server_dies_finishes_with_one_warning(tmp_path, monkeypatch):
    from ablate.flows.run import server
    state = tmp_path / "state"
    spec = write_experiment(tmp_path, "lost-api", smoke_size=24, seed=7,
                            metrics={"ks": [1, 3], "key": ["final/recall_at_3"]},
                            stats=FAST_STATS, baseline=pipeline(generator=None),
                            sweeps=[vary("fusion.rrf_k", 5, 500), vary("chunking.size", 64)])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "MLFLOW_"))}
    env.update(HF_HUB_OFFLINE="1", ABLATE_STATE_HOME=str(state), ABLATE_PREFECT_SERVER="machine")
    ablate = Path(sys.executable).with_name("ablate")
    proc = subprocess.Popen([str(ablate), "run", spec.name, "--no-mlflow", "--out", "runs",
                             "--cache-dir", "cache"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    monkeypatch.setenv("ABLATE_STATE_HOME", str(state))
    lines, killed = [], None
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if killed is None and line.lstrip().startswith("[ 3/"):
                killed = json.loads((server.state_dir() / "server.json").read_text())["pid"]
                os.killpg(killed, signal.SIGKILL)
        proc.wait(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
        server.stop()
    out = "".join(lines)
    assert killed is not None, out
    assert proc.returncode == 0, out[-3000:]
    warnings = [ln for ln in lines if ln.startswith("ablate: warning:")]
    assert len(warnings) == 1 and "Prefect server" in warnings[0], out[-3000:]
    for noise in ("Traceback", "Error logging to API", "EventsWorker", "ConnectError"):
        assert noise not in out, (noise, out[-3000:])
    (sweep,) = (tmp_path / "runs").glob("lost-api-*")
    for name in ("per_query.parquet", "stats.parquet", "report.md", "summary.txt"):
        assert (sweep / name).is_file(), name
    assert "Report:" in out
