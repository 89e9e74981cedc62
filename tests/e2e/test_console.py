"""The console of `ablate run` through the real CLI, Prefect flow and MLflow store: quiet
by default (a header, one line per stage, the summary; no Prefect or MLflow log line, no
Python warning), everything with --verbose."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.flows.direct import write_spec
from tests.specs import experiment, vary

# A tiny sweep (BM25, extractive answers) that other tests reuse. Its fusion.rrf_k value
# equals the baseline's (line 13 of the file): a notice, not a warning.
FIELDS = {"tier": "smoke", "smoke_size": 12,
          "sweeps": [vary("fusion.rrf_k", 60), vary("context.budget", 64)]}
SPEC = experiment("console-tiny", **FIELDS)
STAGE = re.compile(r"^  \[ ?\d+/\d+\] \S+ +[0-9a-f]{8}  (computed +\d+\.\ds|cached) +\d+s$")


@pytest.fixture
def spec(tmp_path):
    return write_spec(tmp_path, SPEC)


def _run(spec, tmp_path, shared_cache, *extra) -> subprocess.CompletedProcess:
    """`ablate run` as a user starts it: its own process, talking to the test's Prefect
    server (so no temporary server has to start)."""
    from prefect.settings import PREFECT_API_URL
    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value(), "PYTHONPATH": str(ROOT)}
    env.pop("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", None)
    return subprocess.run(
        [sys.executable, "-m", "ablate.flows.cli.main", "run", str(spec), "--out", str(tmp_path / "runs"),
         "--cache-dir", str(shared_cache), "--tracking-uri", f"sqlite:///{tmp_path / 'mlflow.db'}",
         *extra], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200)


def test_quiet_by_default_then_verbose(prefect_server, spec, tmp_path, shared_cache):
    quiet = _run(spec, tmp_path, shared_cache)
    assert quiet.returncode == 0, quiet.stderr
    # the sweep ETA lines (test_sweep_eta_line_once_per_computed_stage) aside
    lines = [ln for ln in quiet.stdout.splitlines() if not ln.startswith("  sweep ETA: ")]
    assert lines[0] == f"notice: {spec}:13: fusion.rrf_k=60 equals the baseline; dropped"
    assert lines[1] == "ablate: console-tiny: 2 variants x 12 questions, 11 unique stages"
    stage_lines = [ln for ln in lines if ln.startswith("  [")]
    assert len(stage_lines) == 11 and all(STAGE.match(ln) for ln in stage_lines), stage_lines
    assert lines[2:13] == stage_lines  # one line per stage, right after the header
    assert any(ln.startswith("variant ") for ln in lines[13:])  # the summary table
    assert lines[-1].startswith("Report: ")
    assert len(lines) <= 13 + 12  # summary: table, MLflow run, report
    assert quiet.stderr == ""  # no Prefect or MLflow log line, no Python warning

    verbose = _run(spec, tmp_path, shared_cache, "--verbose")
    assert verbose.returncode == 0, verbose.stderr
    assert "Finished in state Completed()" in verbose.stderr  # Prefect's own lines are back
    assert "Beginning flow run" in verbose.stderr
    assert not [ln for ln in verbose.stdout.splitlines() if ln.startswith("  [")]  # no second copy


ETA = re.compile(r"^  sweep ETA: about \d+(\.\d)? (s|min|h) of stage compute left for \d+ stages")


def test_sweep_eta_line_once_per_computed_stage(prefect_server, spec, tmp_path):
    """Issue 42: one sweep-level ETA line as each computed stage finishes (none after a
    cached one, none after the last), on a fresh stage cache so stages compute."""
    quiet = _run(spec, tmp_path, tmp_path / "fresh-cache")
    assert quiet.returncode == 0, quiet.stderr
    lines = quiet.stdout.splitlines()
    etas = [i for i, ln in enumerate(lines) if ln.startswith("  sweep ETA: ")]
    computed = [i for i, ln in enumerate(lines) if ln.startswith("  [") and "computed" in ln]
    assert etas and all(ETA.match(lines[i]) for i in etas), lines
    assert len(etas) <= len(computed)  # never more than one per computed stage
    for i in etas:  # each right under a computed stage's line
        assert "computed" in lines[i - 1] and lines[i - 1].startswith("  ["), lines
    last_stage = max(i for i, ln in enumerate(lines) if ln.startswith("  ["))
    assert all(i < last_stage for i in etas)  # nothing left: no line
