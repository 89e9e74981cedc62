"""A run that loses its Prefect API carries on without it and says so in one line.

The machine server `ablate run` uses (flows/run/server.py) can die under a run: killed by
hand or by the system, or stopped by an older ablate of another project. The sweep's stages
and outputs do not need the API (Prefect 3 reports task runs as events), but Prefect then
prints an error for every event and log batch it cannot send, retrying each (minutes of
"Error logging to API" / EventsWorker lines at exit), and the flow run's last state change
raises `httpx.ConnectError` out of the flow call, after the outputs are written.

`Watch(pid)` follows the server's process (its existence, not its answers: a slow answer
under load is no loss). Once the process is gone it mutes Prefect's API traffic for the rest
of the process (events and log batches are dropped, not retried; Prefect's warnings about
what it could not publish are kept off the console), and `recover()` turns the flow call's
connection error into the flow's own result, kept by `keep()` as the flow returns: the CLI
then prints one `ablate: warning:` line and the usual summary. A run whose flow did not
return (lost before its end, then failed) ends with RunFailed and the command that resumes.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from ablate.components.contract.errors import RunFailed

_kept: dict[str, Any] = {}
_muted = {"on": False}
POLL_S = 0.05  # a read of /proc/<pid>/cmdline


def keep(result: dict[str, Any]) -> dict[str, Any]:
    """The sweep flow's result, kept as it returns (the flow call may still raise when
    Prefect cannot record the run's end); returned unchanged."""
    _kept["result"] = result
    return result


class _AfterLoss(logging.Filter):
    """On Prefect's console handlers once the API is gone: no line of Prefect's own (what
    it could not publish or send); the CLI says it once."""

    def __init__(self, watch: "Watch") -> None:
        super().__init__()
        self.watch = watch

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith("prefect"):
            return True
        if not _muted["on"] and record.levelno >= logging.WARNING and self.watch._gone():
            self.watch.lost = True  # seen here before the watch thread's next look
            mute_prefect_api()
        return not _muted["on"]


def mute_prefect_api() -> None:
    """Drop Prefect's queued events and API log batches instead of sending (and retrying)
    them, and keep its complaints off the console, for the rest of the process."""
    if _muted["on"]:
        return
    _muted["on"] = True
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    async def drop(self: Any, *items: Any) -> None:
        return None

    EventsWorker._handle = drop  # type: ignore[method-assign,assignment]
    APILogWorker._handle_batch = drop  # type: ignore[method-assign,assignment]
    _no_retries()
    # the item in flight when the server died fails once more, on this logger
    logging.getLogger("prefect._internal.concurrency").disabled = True


def _no_retries() -> None:
    """Prefect's API clients send each request once (no retries with back-off, which made
    each call to a dead server take many seconds): the flow's last calls fail at once."""
    from prefect.client.base import PrefectHttpxAsyncClient, PrefectHttpxSyncClient

    def once(self: Any, request: Any, send: Any, send_args: Any, send_kwargs: Any,
             *rest: Any, **kw: Any) -> Any:
        return send(request, *send_args, **send_kwargs)

    async def once_async(self: Any, request: Any, send: Any, send_args: Any,
                         send_kwargs: Any, *rest: Any, **kw: Any) -> Any:
        return await send(request, *send_args, **send_kwargs)

    PrefectHttpxSyncClient._send_with_retry = once  # type: ignore[method-assign,assignment]
    PrefectHttpxAsyncClient._send_with_retry = once_async  # type: ignore[method-assign,assignment]


class Watch:
    """Follows the Prefect server process `pid` (None: nothing to follow, a user's own or
    Prefect's temporary server) while the sweep runs."""

    def __init__(self, pid: int | None, resume: str) -> None:
        self.pid, self.resume, self.lost = pid, resume, False
        self._stop = threading.Event()
        _kept.clear()
        self._thread: threading.Thread | None = None
        if pid is not None:
            from ablate.flows.run.console import _console_handlers
            self._filter = _AfterLoss(self)
            self._handlers = _console_handlers()
            for handler in self._handlers:
                handler.addFilter(self._filter)
            self._thread = threading.Thread(target=self._run, name="prefect-api-watch",
                                            daemon=True)
            self._thread.start()

    def _gone(self) -> bool:
        from ablate.flows.run.server import _is_server
        return self.pid is not None and not _is_server(self.pid)

    def _run(self) -> None:
        while not self._stop.wait(POLL_S):
            if self._gone():
                self.lost = True
                mute_prefect_api()
                return

    def __enter__(self) -> "Watch":
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for handler in getattr(self, "_handlers", []):
            handler.removeFilter(self._filter)

    def recover(self, exc: BaseException) -> dict[str, Any]:
        """The flow's result when `exc` came from losing the API after the flow returned;
        RunFailed (with the command that resumes) when the API was lost before; `exc`
        itself when the API was not lost or `exc` is the run's own failure."""
        if not self.lost and self._gone():
            self.lost = True
            mute_prefect_api()
        if not self.lost or isinstance(exc, RunFailed):
            raise exc
        if "result" in _kept:
            return dict(_kept["result"])
        raise RunFailed(f"the Prefect server (pid {self.pid}) stopped during the run; the "
                        "stages that finished are cached", hint=self.resume) from exc

    def warning(self) -> str:
        return (f"ablate: warning: the Prefect server (pid {self.pid}) stopped during the run: "
                "the results are written, but the Prefect UI does not show how this run ended "
                "(the next `ablate run` starts a new server)")
