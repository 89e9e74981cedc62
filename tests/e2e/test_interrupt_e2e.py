"""Ctrl-C (SIGINT to the process group, as a terminal sends it) and SIGTERM (to the process,
as `kill` sends it) stop `ablate run` while SmolLM2 generates on the torch backend: exit
130 / 143, one line saying how to resume and no traceback; the stages that finished stay in
the cache and the next run reuses them (issue 40).

Real `ablate run` processes using the machine's Prefect server (in a temporary state folder,
stopped at the end), as a user runs them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.specs import FAST_STATS, pipeline, vary, write_experiment

TIMEOUT = 600


def _run_until_generating(folder: Path, env: dict[str, str], sig: int, group: bool):
    ablate = Path(sys.executable).with_name("ablate")
    proc = subprocess.Popen([str(ablate), "run", "exp.yaml", "--no-mlflow"], cwd=folder,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    lines, sent = [], False
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            # a progress line inside the generation stage: SmolLM2 is generating
            if not sent and line.lstrip().startswith("generate ") and "%" in line:
                (os.killpg if group else os.kill)(proc.pid, sig)
                sent = True
        proc.wait(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    out = "".join(lines)
    assert sent, out[-3000:]
    return proc.returncode, out


def test_ctrl_c_and_sigterm_stop_generation_and_keep_the_cache(tmp_path, monkeypatch):
    from ablate.flows.run import server
    # one question per batch and 16 of them: progress lines come while SmolLM2 generates
    # (a batch of all the questions would finish the stage before its first line)
    write_experiment(tmp_path, "stop-gen", smoke_size=16, seed=7,
                     metrics={"ks": [1, 3], "key": ["final/recall_at_3"]}, stats=FAST_STATS,
                     baseline=pipeline(generator={"name": "smollm2", "backend": "torch",
                                                  "max_new_tokens": 16, "batch_size": 1}),
                     sweeps=[vary("fusion.rrf_k", 5)])
    state = tmp_path / "state"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "MLFLOW_"))}
    env.update(HF_HUB_OFFLINE="1", ABLATE_STATE_HOME=str(state), ABLATE_PREFECT_SERVER="machine")
    monkeypatch.setenv("ABLATE_STATE_HOME", str(state))
    try:
        for sig, group, code, name in ((signal.SIGINT, True, 130, "Ctrl-C"),
                                       (signal.SIGTERM, False, 143, "SIGTERM")):
            rc, out = _run_until_generating(tmp_path, env, sig, group)
            assert rc == code, out[-3000:]
            said = [ln for ln in out.splitlines() if ln.startswith("ablate: interrupted")]
            assert said == [f"ablate: interrupted ({name}): stages that finished are kept in "
                            "the cache; resume with: ablate run exp.yaml --no-mlflow"], out[-3000:]
            assert "Traceback" not in out, out[-3000:]
            if sig == signal.SIGTERM:  # the second run reused what the first one finished
                stages = [ln.split() for ln in out.splitlines() if ln.lstrip().startswith("[")]
                assert stages and all("cached" in s for s in stages
                                      if s[1] in ("chunk", "retrieve:bm25", "rerank")), out
        cache = tmp_path / ".ablate" / "cache"
        assert list(cache.glob("chunk/*/*.sha256")), "the finished stages are in the cache"
        assert server._alive(server.read_info().pid)  # the machine server is left running
    finally:
        server.stop()
