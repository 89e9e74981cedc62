"""The MLflow UI in a real headless chromium: the link ablate prints opens the
experiment on its runs table (MLflow 3.17 picks GenAI or classic view from the URL's
`workflowType`, not from the experiment tag). Skipped where Debian's chromium is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.components.report.synthetic import make_sweep
from tests.servers import free_port, serve

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("ABLATE_REQUIRE_CHROMIUM"),
                                reason="needs Debian's chromium: apt-get install -y chromium")


def rendered_dom(url: str) -> str:
    """The page's DOM after its scripts ran (virtual time lets the SPA fetch its data)."""
    profile = tempfile.mkdtemp(prefix="ablate-chromium-")
    try:
        proc = subprocess.run([str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu",
                               "--no-first-run", "--disable-dev-shm-usage",
                               f"--user-data-dir={profile}", "--window-size=1400,1000",
                               "--virtual-time-budget=30000", "--dump-dom", url],
                              capture_output=True, text=True, timeout=180)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return proc.stdout


@pytest.fixture(scope="module")
def ui(tmp_path_factory):
    from ablate.flows.track.tracking import log_sweep
    tmp = tmp_path_factory.mktemp("mlflow-ui")
    port = free_port()
    uri = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", f"sqlite:///{tmp}/m.db",
           "--default-artifact-root", str(tmp / "art"), "--host", "127.0.0.1", "--port", str(port),
           "--workers", "1"]
    with serve(cmd, uri + "/health", tmp / "server.log", 300,
               env={**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true"}):
        out = log_sweep(make_sweep(tmp / "sweep", extra=True), uri)
        yield uri, out


def test_printed_link_opens_the_runs_table_not_the_genai_view(ui):
    uri, out = ui
    dom = rendered_dom(f"{uri}/{out['url_path']}")
    assert "Run Name" in dom and "synthetic 2026-01-02T03:04:05Z" in dom  # the runs table
    assert "Evaluation runs" not in dom  # no GenAI navigation


def test_plain_experiment_link_would_open_the_genai_view(ui):
    """Why the link carries workflowType: without it MLflow 3.17 shows GenAI's overview
    (an empty traces dashboard) despite the experiment's mlflow.experimentKind tag."""
    uri, out = ui
    dom = rendered_dom(f"{uri}/#/experiments/{out['experiment_id']}")
    assert "Run Name" not in dom and "Traces" in dom
