"""Process environment for ablate: offline models, telemetry off, Prefect home in the project.

Call `prepare()` before prefect or mlflow is imported. Values already set by the user win.
"""

from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ablate.components.runtime import models

STATE_DIR = ".ablate"  # run state under the project root: MLflow store, cache


def machine_state_dir(name: str) -> Path:
    """State kept once per machine (the Prefect server, the MLflow store template, native
    probes): ablate.components.runtime.models.machine_state_dir."""
    return models.machine_state_dir(name)


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` across processes, held inside: a folder (locked as it
    is, no file added to it) or a file (created if missing)."""
    if path.is_dir():
        fd = os.open(path, os.O_RDONLY)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


MLFLOW_HTTP_DEFAULTS = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
    "MLFLOW_HTTP_REQUEST_BACKOFF_JITTER": "0.5",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "30",
}


def prepare(root: Path | None = None) -> Path:
    """Set environment defaults and return the project root (the current folder)."""
    root = (root or Path.cwd()).resolve()
    defaults = {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "MLFLOW_DISABLE_TELEMETRY": "true",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_TELEMETRY_ENABLE_RESOURCE_METRICS": "false",
        "PREFECT_CLOUD_ENABLE_ORCHESTRATION_TELEMETRY": "false",
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180",
        # An MLflow server that dies mid-run: MLflow's defaults (7 retries, backoff factor
        # 2, 120 s per request) took 248 s to say so; these take a few seconds (issue 39.9).
        # The results are on disk either way and `ablate sync` logs them later.
        **MLFLOW_HTTP_DEFAULTS,
    }
    if not (root / "prefect.toml").exists():
        # Outside a project with its own prefect.toml, keep Prefect's state here anyway.
        defaults["PREFECT_HOME"] = str(root / ".prefect")
        defaults["PREFECT_RESULTS_LOCAL_STORAGE_PATH"] = str(root / ".prefect" / "storage")
    for key, value in defaults.items():
        os.environ.setdefault(key, value)
    return root


def tracking_uri(cli_value: str | None, root: Path) -> str:
    """--tracking-uri, else $MLFLOW_TRACKING_URI, else the project's local SQLite store."""
    return cli_value or os.environ.get("MLFLOW_TRACKING_URI") or default_tracking_uri(root)


def default_tracking_uri(root: Path) -> str:
    """The local MLflow store: SQLite under the project's state folder."""
    return f"sqlite:///{(root / STATE_DIR / 'mlflow.db').as_posix()}"


def default_artifact_root(root: Path) -> str:
    return (root / STATE_DIR / "mlartifacts").as_uri()
