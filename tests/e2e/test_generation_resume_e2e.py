"""`ablate run` killed (SIGKILL, nothing can be saved on the way out) while SmolLM2 generates
on the torch backend, then run again: the second run generates only the prompts the first
had not finished, and reuses every answer the first one had (issue 58.7: before, the
answers of a stage were cached only when the whole stage ended, so all were generated
again).

Real `ablate run` processes, as a user runs them, on the session's Prefect server. Small:
6 questions, 2 per batch, 8 new tokens; the first run is killed once the first batch's
answers are in the generation cache."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import ROOT
from tests.specs import FAST_STATS, pipeline, write_experiment

N = 6
TIMEOUT = 600


def _start(folder: Path) -> subprocess.Popen:
    from prefect.settings import PREFECT_API_URL
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "MLFLOW_"))}
    env.update(HF_HUB_OFFLINE="1", PREFECT_API_URL=str(PREFECT_API_URL.value()),
               PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-m", "ablate.flows.cli.main", "run", "exp.yaml",
                             "--no-mlflow"], cwd=folder, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def _answers(cache: Path) -> set[str]:
    """The generation cache's entries (a temporary file of a killed write is not one)."""
    return {p.name for p in (cache / "generations").glob("*/*.json")}


def test_killed_generation_resumes_with_only_the_unfinished_prompts(prefect_server, tmp_path):
    write_experiment(tmp_path, "gen-resume", smoke_size=N, seed=7,
                     metrics={"ks": [1], "key": ["answer/f1"]}, stats=FAST_STATS,
                     baseline=pipeline(generator={"name": "smollm2", "backend": "torch",
                                                  "max_new_tokens": 8, "batch_size": 2}))
    cache = tmp_path / ".ablate" / "cache"
    proc = _start(tmp_path)
    deadline = time.monotonic() + TIMEOUT
    try:
        # the first batch (2 prompts) is answered, both files written: the stage is mid-way
        # (a kill between the two writes of a batch would keep one answer of it)
        while len(_answers(cache)) < 2:
            assert proc.poll() is None, proc.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "no answer was ever cached"
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
    kept = _answers(cache)
    assert 2 <= len(kept) < N, kept  # whole batches, not the whole stage
    assert not list(cache.glob("generate/*/*.parquet")), "the stage had finished"

    out, _ = _start(tmp_path).communicate(timeout=TIMEOUT)
    assert "Traceback" not in out, out[-3000:]
    (manifest,) = tmp_path.glob("runs/gen-resume-*/manifest.json")
    counters = json.loads(manifest.read_text())["counters"]
    assert counters["prompts_reused"] == len(kept), out[-3000:]
    assert counters["prompts_generated"] == N - len(kept), out[-3000:]
    assert kept < _answers(cache) and len(_answers(cache)) == N
