"""Where a logged sweep is seen in the MLflow UI: its runs table's link, and how to open it.

Kept apart from flows/track/tracking.py so that printing the link does not import mlflow
(about 1 s and 100 MB): `ablate run` prints it even when nothing was logged anew.
"""

from __future__ import annotations

from typing import Any


def runs_page(exp_id: str) -> str:
    """The experiment's runs table in the MLflow UI, relative to the server's root.

    MLflow 3.17's UI ignores the `mlflow.experimentKind` tag: it picks the GenAI or the
    classic view from the URL's `workflowType`, else the browser's stored choice
    (localStorage `mlflow.workflowType`), else GenAI. This link asks for the classic view.
    """
    return f"#/experiments/{exp_id}/runs?workflowType=machine_learning"


def mlflow_command() -> str:
    """This install's `mlflow` command by its full path (it runs without the venv on PATH),
    else this interpreter's `-m mlflow`."""
    import shlex
    import sys
    from pathlib import Path
    script = Path(sys.executable).with_name("mlflow")
    return shlex.quote(str(script)) if script.is_file() else shlex.join([sys.executable, "-m", "mlflow"])


def ui_lines(tracking_uri: str, logged: dict[str, Any]) -> list[str]:
    """How to open the sweep's runs table: the URL itself for a server, else the command
    that starts the UI and the page to open in it."""
    page = logged.get("url_path") or runs_page(logged["experiment_id"])
    if tracking_uri.startswith(("http://", "https://")):
        return [f"  runs table: {tracking_uri.rstrip('/')}/{page}"]
    return [f"  open the UI with: {mlflow_command()} ui --backend-store-uri {tracking_uri}",
            f"  then its runs table: http://127.0.0.1:5000/{page}"]
