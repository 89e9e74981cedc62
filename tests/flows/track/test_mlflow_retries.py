"""An MLflow server that dies mid-run (issue 39.9): MLflow's own defaults (7 retries with
a backoff factor of 2, 120 s per request) took 248 s to say so. `ablate` sets defaults
that give up within a few seconds, unless the user set them."""

from __future__ import annotations

import socket
import threading

from ablate.flows import env


def _clean(monkeypatch):
    for key in env.MLFLOW_HTTP_DEFAULTS:
        monkeypatch.delenv(key, raising=False)


def test_prepare_caps_mlflow_http_retries(monkeypatch, tmp_path):
    import mlflow.environment_variables as mv
    _clean(monkeypatch)
    env.prepare(tmp_path)
    assert mv.MLFLOW_HTTP_REQUEST_MAX_RETRIES.get() == 2
    assert mv.MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR.get() == 1
    assert mv.MLFLOW_HTTP_REQUEST_TIMEOUT.get() == 30
    # the longest wait between attempts, backoff * 2^(retry - 1) plus jitter: seconds
    waits = [mv.MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR.get() * 2 ** i
             + mv.MLFLOW_HTTP_REQUEST_BACKOFF_JITTER.get()
             for i in range(mv.MLFLOW_HTTP_REQUEST_MAX_RETRIES.get())]
    assert sum(waits) <= 5


def test_a_users_setting_wins(monkeypatch, tmp_path):
    import mlflow.environment_variables as mv
    _clean(monkeypatch)
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "9")
    env.prepare(tmp_path)
    assert mv.MLFLOW_HTTP_REQUEST_MAX_RETRIES.get() == 9


def test_a_server_that_drops_every_connection_is_tried_three_times(monkeypatch, tmp_path):
    """A real MLflow client against a server that accepts and closes each connection:
    the first attempt and two retries, then the error."""
    from mlflow.tracking import MlflowClient
    _clean(monkeypatch)
    env.prepare(tmp_path)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(30)
    accepted = []

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append(1)
            conn.close()
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    client = MlflowClient(f"http://127.0.0.1:{server.getsockname()[1]}")
    try:
        client.log_metric("0123456789abcdef", "m", 1.0)
    except Exception:  # noqa: BLE001 - MlflowException, whatever MLflow wraps it in
        pass
    else:
        raise AssertionError("logging to a dead server succeeded")
    finally:
        server.close()
    t.join(5)
    assert len(accepted) == 3
