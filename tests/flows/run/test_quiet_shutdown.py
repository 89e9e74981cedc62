"""Prefect's exit-time queue drains ("Still processing items: N items remaining...") stay
off the console of a quiet run: a failed run's error stays one line."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap

from ablate.flows.run import console


def test_the_loggers_are_prefects_queue_services():
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker
    assert {EventsWorker.__name__, APILogWorker.__name__} == set(console.SHUTDOWN_LOGGERS)


def test_a_drain_warning_at_exit_is_not_printed():
    """A warning from EventsWorker's logger at interpreter exit, through Prefect's own
    console logging, reaches stderr without quiet_shutdown and not with it."""
    script = textwrap.dedent("""
        import atexit, logging, sys
        from prefect.logging.configuration import ensure_logging_setup
        ensure_logging_setup()
        if sys.argv[1] == "quiet":
            from ablate.flows.run.console import quiet_shutdown
            quiet_shutdown()
        atexit.register(lambda: logging.getLogger("EventsWorker").warning(
            "Still processing items: 1 items remaining..."))
        print("ablate: error: the one line", file=sys.stderr)
    """)
    for mode, shown in (("loud", True), ("quiet", False)):
        err = subprocess.run([sys.executable, "-c", script, mode], capture_output=True,
                             text=True, check=True).stderr
        assert ("Still processing items" in err) is shown, (mode, err)
        assert err.startswith("ablate: error: the one line")


def test_quiet_shutdown_keeps_errors():
    console.quiet_shutdown()
    logger = logging.getLogger("EventsWorker")
    assert not logger.isEnabledFor(logging.WARNING) and logger.isEnabledFor(logging.ERROR)
