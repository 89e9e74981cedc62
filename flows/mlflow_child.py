"""MLflow logging in a child process that starts while the analysis runs.

Importing MLflow and opening its store costs ~3 s of pure-Python work (benchmarks/
memory.py times the import). On a thread it holds the GIL against the statistics and the
report; in a child process it runs on another core. The child starts after the stages
(so MLflow is never resident beside the encoder), imports MLflow and opens the store,
then waits on its stdin for the sweep folder, logs it with flows.tracking.log_sweep and
answers one JSON line on stdout: {"runs": ...} or {"error": ..., "type": ...}. End of
input (the parent closed the pipe, or died) makes it exit without logging.

The parent uses it only when MLflow is not imported in its own process yet (`ablate run`);
where it is (tests, a notebook), logging in-process costs nothing extra.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any


class ChildLoggingError(Exception):
    """log_sweep failed in the child; `kind` is the name of the child's exception type."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class MlflowChild:
    """A started child: `log(sweep_dir)` hands it the folder and returns the runs."""

    def __init__(self, tracking_uri: str, artifact_root: str | None,
                 flow_run_id: str | None) -> None:
        self.tracking_uri = tracking_uri
        self._stderr = tempfile.TemporaryFile()
        path = [p for p in sys.path if p]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "flows.mlflow_child", tracking_uri, artifact_root or "",
             flow_run_id or ""],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, env=env)

    @property
    def pid(self) -> int:
        return self._proc.pid

    def log(self, sweep_dir: str) -> dict[str, Any]:
        """The child's runs; ChildLoggingError when log_sweep failed there, OSError or
        ValueError when the child itself broke (the caller then logs in-process)."""
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write((str(sweep_dir) + "\n").encode())
            proc.stdin.close()
            line = proc.stdout.readline()  # the answer; the child's exit is not waited for
            proc.stdout.close()
            if not line.strip():
                code = proc.wait()
                self._stderr.seek(0)
                said = self._stderr.read().decode(errors="replace").strip().splitlines()
                raise OSError(f"the MLflow child exited with {code} and no answer"
                              + (f": {said[-1]}" if said else ""))
        finally:
            self._close()
        answer = json.loads(line)
        if "error" in answer:
            raise ChildLoggingError(answer.get("type", "Exception"), answer["error"])
        return answer["runs"]

    def stop(self) -> None:
        """Let the child go without logging (end of its input makes it exit)."""
        if self._proc.poll() is None:
            try:
                self._proc.communicate(b"", timeout=30)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                self._proc.kill()
        self._close()

    def _close(self) -> None:
        if not self._stderr.closed:
            self._stderr.close()


_PENDING: dict[str, MlflowChild] = {}
_LOCK = threading.Lock()


def start(tracking_uri: str, artifact_root: str | None, flow_run_id: str | None) -> bool:
    """Start a child for this tracking URI when MLflow is not imported here yet; True when
    one was started (`take` then hands it over)."""
    if "mlflow" in sys.modules:
        return False
    try:
        child = MlflowChild(tracking_uri, artifact_root, flow_run_id)
    except OSError:
        return False
    with _LOCK:
        old = _PENDING.pop(tracking_uri, None)
        _PENDING[tracking_uri] = child
    if old is not None:
        old.stop()
    return True


def take(tracking_uri: str) -> MlflowChild | None:
    """The child started for this URI (and forget it), else None."""
    with _LOCK:
        return _PENDING.pop(tracking_uri, None)


def _serve(tracking_uri: str, artifact_root: str | None, flow_run_id: str | None) -> int:
    try:  # the slow part, done while the parent analyses
        import flows.tracking  # noqa: F401
        from flows.mlflow_store import open_store
        open_store(tracking_uri)
    except Exception:  # noqa: BLE001 - log_sweep below meets and reports the same problem
        pass
    line = sys.stdin.readline().strip()
    if not line:
        return 0
    try:
        from flows.tracking import log_sweep
        runs = log_sweep(Path(line), tracking_uri, artifact_root, flow_run_id=flow_run_id)
        answer: dict[str, Any] = {"runs": runs}
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which warns
        answer = {"error": str(exc), "type": type(exc).__name__}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
    os._exit(0)  # everything is committed: skip the interpreter's ~1 s of tear-down


if __name__ == "__main__":
    uri, root, run_id = sys.argv[1], sys.argv[2] or None, sys.argv[3] or None
    raise SystemExit(_serve(uri, root, run_id))
