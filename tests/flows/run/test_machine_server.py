"""The machine's Prefect server (flows/run/server.py): started once, reused by the next run
from any folder, replaced when it does not answer, stopped on request. A real Prefect
server in a temporary state folder."""

from __future__ import annotations

import os

import pytest

from ablate.flows.run import server


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("ABLATE_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setenv(server.MODE_ENV, "machine")
    yield server.state_dir()
    server.stop()


def test_started_once_then_reused_then_stopped(state, monkeypatch, tmp_path):
    first, started = server.ensure()
    assert started and server._healthy(first)
    assert (state / "home").is_dir()  # its own PREFECT_HOME, not the project's
    assert state.parent == tmp_path / "state" / "prefect-server"
    monkeypatch.chdir(tmp_path)  # another folder: the same server
    again, started_again = server.ensure()
    assert not started_again and again == first
    bg = server.Background()
    assert bg.join() == first and os.environ["PREFECT_API_URL"] == first.api_url
    assert server.stop() == first and not server._alive(first.pid)
    assert server.read_info() is None


def test_user_url_and_ephemeral_mode_start_nothing(state, monkeypatch):
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:4200/api")
    assert not server.wanted() and server.Background().join() is None
    monkeypatch.delenv("PREFECT_API_URL")
    monkeypatch.setenv(server.MODE_ENV, "ephemeral")
    assert not server.wanted() and server.Background().join() is None
    assert not (state / "server.json").exists()


def test_a_dead_server_is_replaced(state):
    first, _ = server.ensure()
    server._terminate(first.pid)
    second, started = server.ensure()
    assert started and second.pid != first.pid and server._healthy(second)
