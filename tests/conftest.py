"""Shared test set-up: offline models, telemetry off, one Prefect server per session."""

from __future__ import annotations

import logging
import os
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from ablate.components import catalogue
from ablate.flows import env

ROOT = Path(__file__).resolve().parents[1]
env.prepare(ROOT)
catalogue.load()  # what the CLI and the flow do first: register the built-in components
# Tests use Prefect's per-process temporary server (or the session's test harness), never
# the machine server `ablate run` keeps (flows/run/server.py): no server outlives the tests.
os.environ.setdefault("ABLATE_PREFECT_SERVER", "ephemeral")
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(autouse=True)
def _log_streams_stay_open():
    """A logging handler (Prefect's console handler among them) created while pytest
    captured output keeps that capture's stream, which pytest closes after the test;
    later tests in the same process would then log into a closed file. Point any such
    handler back at the real stderr after each test."""
    yield
    loggers = [logging.getLogger()] + [logging.getLogger(n) for n in
                                       list(logging.root.manager.loggerDict)]
    for logger in loggers:
        for handler in list(getattr(logger, "handlers", [])):
            stream = getattr(handler, "stream", None)
            if stream is not None and getattr(stream, "closed", False):
                handler.stream = sys.__stderr__  # not setStream: it flushes the closed one
                console = getattr(handler, "console", None)
                if console is not None:
                    console.file = sys.__stderr__


@contextmanager
def registries_restored():
    """Components a test registers (plugins, fakes) are gone after it, so later tests in
    the same process see the built-in registries only."""
    from ablate.components.contract import plugins
    from ablate.components.contract.registry import CATALOGUE, all_declarations
    all_declarations()  # the built-ins are registered before the snapshot
    saved = {k: (dict(r._items), dict(r._decls)) for k, r in CATALOGUE.items()}
    loaded = dict(plugins._LOADED)
    try:
        yield
    finally:
        for kind in list(CATALOGUE):
            if kind not in saved:
                del CATALOGUE[kind]
                continue
            reg = CATALOGUE[kind]
            reg._items.clear()
            reg._items.update(saved[kind][0])
            reg._decls.clear()
            reg._decls.update(saved[kind][1])
        plugins._LOADED.clear()
        plugins._LOADED.update(loaded)


@pytest.fixture(scope="session")
def prefect_server():
    """A temporary Prefect API (started once: ~15-20 s on a cold machine)."""
    from prefect.testing.utilities import prefect_test_harness
    with prefect_test_harness(server_startup_timeout=180):
        yield


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory) -> Path:
    """One stage/embedding cache for the session, so end-to-end tests embed a text once."""
    return tmp_path_factory.mktemp("ablate-cache")


@pytest.fixture
def run_cli():
    """`ablate ARGV...` in this process through the real entry point; its exit code."""
    from ablate.flows.cli import main as cli

    def run(*argv: str) -> int:
        with pytest.raises(SystemExit) as info:
            cli.main(list(argv))
        return info.value.code or 0
    return run
