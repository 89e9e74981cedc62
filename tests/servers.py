"""Real local servers for tests (llama.cpp's OpenAI-compatible server, MLflow): started on
a free loopback port, waited for, and always stopped."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve(cmd: list[str], ready_url: str, log: Path, timeout_s: float = 120,
          headers: dict[str, str] | None = None, env: dict[str, str] | None = None) -> Iterator[None]:
    """Run `cmd` until `ready_url` answers 200; stop it on exit (fail the test if it dies)."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                pytest.fail(f"{cmd[2]} exited: {log.read_text(errors='replace')[-2000:]}")
            try:
                req = urllib.request.Request(ready_url, headers=headers or {})
                with urllib.request.urlopen(req, timeout=2) as resp:
                    if resp.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"{cmd[2]} not ready in {timeout_s:.0f} s: "
                            f"{log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.3)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def llama_server(api_key: str, log: Path, timeout_s: float = 90) -> Iterator[str]:
    """`python -m llama_cpp.server` serving the bundled SmolLM2 GGUF; yields its /v1 URL."""
    from ablate.components.runtime.models import smollm2_gguf_path
    port = free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_gguf_path()),
           "--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port),
           "--n_ctx", "2048", "--n_threads", "1", "--api_key", api_key]
    base = f"http://127.0.0.1:{port}/v1"
    with serve(cmd, f"{base}/models", log, timeout_s, {"Authorization": f"Bearer {api_key}"}):
        yield base
