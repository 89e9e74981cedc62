"""Failures after the stages, through the real Prefect flow and CLI: the report fails (its
builder replaced by one that raises) or MLflow is unreachable. A failed report ends the
flow run Failed with a failure artifact, and the same RunFailed reaches the caller; an
unreachable MLflow leaves the run Completed. Either way `ablate run` prints one
`ablate: error:` line naming the command that continues, no traceback (Prefect's stays
in --verbose), and exits 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ablate.components.contract.errors import RunFailed
from tests.conftest import ROOT
from tests.e2e.test_console import SPEC
from tests.e2e.test_unreachable_mlflow_e2e import _closed_port
from tests.flows.direct import write_spec
from tests.flows.outputs.test_analysis_failures import _boom

# `ablate` through its real entry point, with the report builder raising (no test hook in
# the product: the child patches it before the CLI starts)
REPORT_FAILS = ("import ablate.components.report.build as build\n"
                "def boom(*args, **kwargs):\n"
                "    raise ValueError('plot backend exploded')\n"
                "build.build_report = boom\n"
                "from ablate.flows.cli.main import main\n"
                "main()\n")


def test_failed_report_fails_the_flow_run_and_a_rerun_analyses_again(prefect_server, tmp_path,
                                                                     shared_cache, monkeypatch):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from ablate.flows.run.context import forget_contexts
    from ablate.flows.sweep import run_sweep
    spec_file = write_spec(tmp_path, SPEC)
    run = dict(out=str(tmp_path / "runs"), cache_dir=str(shared_cache), mlflow=False)
    forget_contexts()
    with monkeypatch.context() as patched:
        patched.setattr("ablate.components.report.build.build_report", _boom)
        with pytest.raises(RunFailed) as info:
            run_sweep(str(spec_file), **run)
    folder = Path(info.value.hint.removeprefix("ablate report "))
    assert info.value.message.startswith("report failed (ValueError: plot backend exploded)")
    assert json.loads((folder / "manifest.json").read_text())["incomplete"] == ["report"]
    with get_client(sync_client=True) as client:
        arts = [a for a in client.read_artifacts(artifact_filter=ArtifactFilter(
            key=ArtifactFilterKey(any_=["ablate-console-tiny-failure"])))
            if info.value.message in a.data]
        assert len(arts) == 1 and f"`{info.value.hint}`" in arts[0].data
        assert client.read_flow_run(arts[0].flow_run_id).state.is_failed()
    again = run_sweep(str(spec_file), **run)  # every stage reused, the analysis retried
    assert not again["unchanged"] and Path(again["sweep_dir"]) == folder
    assert "incomplete" not in json.loads((folder / "manifest.json").read_text())
    assert run_sweep(str(spec_file), **run)["unchanged"]


def _ablate(args: list[str], cwd: Path, code: str | None = None) -> subprocess.CompletedProcess:
    """`ablate ARGS` in its own process on the test's Prefect server (`code`: a launcher
    that ends by calling the CLI's main)."""
    from prefect.settings import PREFECT_API_URL
    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value(), "PYTHONPATH": str(ROOT),
           "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0", "MLFLOW_HTTP_REQUEST_TIMEOUT": "2"}
    env.pop("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", None)
    launcher = ["-c", code] if code else ["-m", "ablate.flows.cli.main"]
    return subprocess.run([sys.executable, *launcher, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def _one_error_line(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("ablate: error: ")]
    assert len(errors) == 1, proc.stderr
    return errors[0]


def _run_args(tmp_path: Path, shared_cache: Path) -> list[str]:
    return ["run", str(write_spec(tmp_path, SPEC)), "--out", str(tmp_path / "runs"),
            "--cache-dir", str(shared_cache)]


def test_cli_report_failure_is_one_line_and_exit_1(prefect_server, tmp_path, shared_cache):
    run = _run_args(tmp_path, shared_cache)
    report = _ablate([*run, "--no-mlflow"], tmp_path, REPORT_FAILS)
    line = _one_error_line(report)
    assert line.startswith("ablate: error: report failed (ValueError: plot backend exploded)")
    folder = Path(line.rsplit("; to continue: ablate report ", 1)[1])
    assert report.stderr.strip() == line  # no Prefect line either: the error says it all
    assert (folder / "per_query.parquet").is_file() and not (folder / "report.md").exists()
    verbose = _ablate([*run, "--no-mlflow", "--verbose"], tmp_path, REPORT_FAILS)
    assert verbose.returncode == 1 and "Traceback" in verbose.stderr  # Prefect's, kept here


def test_cli_mlflow_failure_prints_the_summary_then_one_line_and_exit_1(
        prefect_server, tmp_path, shared_cache):
    uri = f"http://127.0.0.1:{_closed_port()}"
    mlflow = _ablate([*_run_args(tmp_path, shared_cache), "--tracking-uri", uri], tmp_path)
    line = _one_error_line(mlflow)
    assert line.startswith("ablate: error: MLflow logging failed (")
    folder = line.rsplit("; to continue: ablate sync ", 1)[1].removesuffix(f" --tracking-uri {uri}")
    assert f"the results are in {folder};" in line and line.endswith(uri)
    assert mlflow.stdout.splitlines()[-1] == f"Report: {folder}/report.md"  # summary first
    assert any(ln.startswith("variant ") for ln in mlflow.stdout.splitlines())
    assert mlflow.stderr.strip() == line
