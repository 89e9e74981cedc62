"""Two installs on one machine (issue 40): each venv's `ablate run` keeps its own Prefect
server, so the second never stops the first one's, and a server that is slow to answer is
waited for, never replaced. Real venvs (`python -m venv` plus a .pth adding this
interpreter's site-packages: seconds) and real Prefect servers in a temporary state folder,
stopped at the end."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
from pathlib import Path

import pytest

from ablate.flows.run import server

ENSURE = ("import json; from ablate.flows.run import server; info, started = server.ensure(); "
          "print(json.dumps({'pid': info.pid, 'port': info.port, 'started': started, "
          "'state': str(server.state_dir())}))")
STOP = "from ablate.flows.run import server; server.stop()"


def _venv(folder: Path) -> Path:
    """A venv whose interpreter sees this one's packages (ablate included), as a second
    project's `./.venv` with the same packages would."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    (sp,) = folder.glob("lib/python3*/site-packages")
    dirs = [d for d in site.getsitepackages() if Path(d).is_dir()]
    (sp / "zz_parent.pth").write_text(
        "import site; " + "; ".join(f"site.addsitedir({d!r})" for d in dirs) + "\n")
    return folder / "bin" / "python"


def _py(python: Path, code: str, state: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(ABLATE_STATE_HOME=str(state), ABLATE_PREFECT_SERVER="machine")
    return subprocess.run([str(python), "-c", code], env=env, capture_output=True, text=True,
                          check=True, timeout=300).stdout


def test_a_second_venv_never_stops_the_first_ones_server(tmp_path):
    state = tmp_path / "state"
    a, b = _venv(tmp_path / "a"), _venv(tmp_path / "b")
    try:
        first = json.loads(_py(a, ENSURE, state).splitlines()[-1])
        second = json.loads(_py(b, ENSURE, state).splitlines()[-1])
        assert first["started"] and second["started"]
        assert server._alive(first["pid"]) and server._alive(second["pid"])
        assert first["state"] != second["state"]  # one state folder per interpreter
        again = json.loads(_py(a, ENSURE, state).splitlines()[-1])
        assert not again["started"] and again["pid"] == first["pid"]
    finally:
        for python in (a, b):
            _py(python, STOP, state)


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("ABLATE_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setenv(server.MODE_ENV, "machine")
    yield
    server.stop()


def test_a_server_slow_to_answer_is_waited_for_not_replaced(state, monkeypatch):
    first, _ = server.ensure()
    real, calls = server._healthy, []

    def slow(info, timeout=2.0):  # the first checks time out, as under load
        calls.append(info.pid)
        return len(calls) > 3 and real(info, timeout)

    monkeypatch.setattr(server, "_healthy", slow)
    again, started = server.ensure()
    assert not started and again == first and server._alive(first.pid)


def test_stop_refuses_while_another_process_uses_the_server(state, run_cli, capsys):
    import subprocess as sp
    first, _ = server.ensure()
    user = sp.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lease = server.state_dir() / "users" / str(user.pid)  # as its Background.join() does
        lease.parent.mkdir(parents=True, exist_ok=True)
        lease.touch()
        assert run_cli("server", "stop") == 1
        assert f"in use by pid {user.pid}" in capsys.readouterr().err
        assert server._alive(first.pid)
        assert run_cli("server", "stop", "--force") == 0 and not server._alive(first.pid)
    finally:
        user.kill()
        user.wait()
