"""What `ablate run` prints: quiet by default, everything with `--verbose`.

Quiet: a header, one compact line per stage as it finishes (and a few progress lines,
count, rate and ETA, inside a long one: encoding, generation, judging), then the
summary. Prefect's and MLflow's own log lines are kept off the console (warnings and
errors still show, without tracebacks, Prefect's failed-state lines and what the CLI says
itself: a failed run says why in one line of its own, flows/cli/main.py); they still reach
the Prefect API, so the Prefect UI keeps the full logs of every flow and task run.
Verbose: the console shows them all, as Prefect and MLflow print them.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import warnings
from contextlib import contextmanager
from typing import Iterator

# Set before prefect / mlflow are imported, and inherited by worker processes (Dask).
QUIET_ENV = {"PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL": "WARNING",
             "MLFLOW_LOGGING_LEVEL": "WARNING", "DASK_LOGGING__DISTRIBUTED": "warning"}
QUIET_LOGGERS = ("mlflow", "alembic")  # their console chatter, once imported
# Prefect's queue services draining at interpreter exit log as their class names
SHUTDOWN_LOGGERS = ("EventsWorker", "APILogWorker")

_progress = {"on": False}
_hidden = {"warnings": 0}
_lock = threading.Lock()


def _count_warning(*args: object, **kwargs: object) -> None:
    with _lock:
        _hidden["warnings"] += 1


def hidden_warnings() -> int:
    """Python warnings (from libraries) kept off the console by the last quiet block."""
    return _hidden["warnings"]


def _console_handlers() -> list[logging.Handler]:
    """Prefect's console handlers (its logging set up first, with the quiet levels when
    they are set), on whatever loggers they are attached to."""
    try:
        from prefect.logging.configuration import ensure_logging_setup
        from prefect.logging.handlers import PrefectConsoleHandler
    except ImportError:  # pragma: no cover - prefect is a dependency
        return []
    ensure_logging_setup()
    loggers = [logging.getLogger()] + [logging.getLogger(n) for n in
                                       list(logging.Logger.manager.loggerDict)]
    return [h for lg in loggers for h in getattr(lg, "handlers", [])
            if isinstance(h, PrefectConsoleHandler)]


# `extra` of a log record that `ablate run` prints as a line of its own (quiet: not twice)
SAID_BY_CLI = {"ablate_said_by_cli": True}


def _no_failure_detail(record: logging.LogRecord) -> bool:
    """Quiet console filter: no traceback, no failed-state line, no record the CLI prints
    itself (SAID_BY_CLI): a failed run ends with one line of the CLI's own."""
    return not (record.exc_info or getattr(record, "ablate_said_by_cli", False)
                or record.getMessage().startswith("Finished in state "))


PROGRESS_LOGGER = "ablate.progress"


class _ProgressLine(logging.Handler):
    """A progress line of a long stage, indented under the stage lines."""

    def emit(self, record: logging.LogRecord) -> None:
        with _lock:
            sys.stdout.write(f"        {record.getMessage()}\n")
            sys.stdout.flush()


@contextmanager
def quiet(enabled: bool = True) -> Iterator[None]:
    """Within the block, keep Prefect and MLflow INFO lines, and Prefect's tracebacks and
    failed-state lines, off the console and print one progress line per stage instead;
    Python warnings from libraries are counted, not printed. Restores every level,
    variable, filter and hook afterwards."""
    _hidden["warnings"] = 0
    if not enabled:
        yield
        return
    saved_env = {k: os.environ.get(k) for k in QUIET_ENV}
    for k, v in QUIET_ENV.items():
        os.environ.setdefault(k, v)
    handlers = {h: h.level for h in _console_handlers()}
    for h in handlers:
        h.setLevel(max(h.level, logging.WARNING))
        h.addFilter(_no_failure_detail)
    levels = {n: logging.getLogger(n).level for n in QUIET_LOGGERS
              if n in logging.Logger.manager.loggerDict}
    for n, level in levels.items():
        logging.getLogger(n).setLevel(max(level, logging.WARNING))
    _progress["on"] = True
    # per-item progress of long stages (components/runtime/progress.py): Prefect's console
    # handler is at WARNING now, so the terminal gets these lines from here
    plog = logging.getLogger(PROGRESS_LOGGER)
    progress_handler, plevel = _ProgressLine(), plog.level
    plog.addHandler(progress_handler)
    if plog.getEffectiveLevel() > logging.INFO:
        plog.setLevel(logging.INFO)
    shown = warnings.showwarning
    warnings.showwarning = _count_warning
    try:
        yield
    finally:
        warnings.showwarning = shown
        _progress["on"] = False
        plog.removeHandler(progress_handler)
        plog.setLevel(plevel)
        for h, level in handlers.items():
            h.setLevel(level)
            h.removeFilter(_no_failure_detail)
        for n, level in levels.items():
            logging.getLogger(n).setLevel(level)
        for k, saved in saved_env.items():
            if saved is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = saved


def quiet_shutdown() -> None:
    """Keep Prefect's exit-time "Still processing items: N items remaining..." warnings
    (its event and log queues draining to a slow server) off the console: they come after
    the run's last line, from the interpreter's exit, when quiet()'s block has ended, and
    would turn a one-line error into two. For the rest of the process (not restored)."""
    for name in SHUTDOWN_LOGGERS:
        logger = logging.getLogger(name)
        logger.setLevel(max(logger.level, logging.ERROR))


def quieting() -> bool:
    return _progress["on"]


def stage_line(done: int, total: int, label: str, key: str, computed: bool | None,
               seconds: float, elapsed: float) -> None:
    """One compact line per finished stage (quiet mode only; verbose shows Prefect's)."""
    if not _progress["on"]:
        return
    width = len(str(total))
    how = ("failed" if computed is None else f"computed {seconds:6.1f}s" if computed
           else "cached")
    with _lock:
        sys.stdout.write(f"  [{done:>{width}}/{total}] {label:<18} {key[:8]}  {how:<16}"
                         f" {elapsed:5.0f}s\n")
        sys.stdout.flush()


def eta_line(text: str) -> None:
    """The sweep-level ETA line (flows/run/sweep_eta.py), under the stage lines (quiet mode)."""
    if not _progress["on"]:
        return
    with _lock:
        sys.stdout.write(f"  {text}\n")
        sys.stdout.flush()
