"""One Prefect API server per machine, started on first use and reused by every later run.

Without a PREFECT_API_URL, Prefect starts a temporary server for each process and stops it
at exit; in a new project folder that start includes creating and migrating a fresh
database (measured ~37 s cold on this 2-core machine, ~12 s after). ablate instead keeps
one server per machine and user: the first `ablate run` starts it, detached, under
`~/.cache/ablate/prefect-server/` (its own PREFECT_HOME and database; ABLATE_STATE_HOME
moves it), and every later run, from any project folder, finds it there and points
PREFECT_API_URL at it. `ablate run` starts or finds it in a background thread while it
loads the data set and plans the sweep, so even the first start overlaps that work.

- A user's own PREFECT_API_URL always wins (their server, their UI).
- ABLATE_PREFECT_SERVER=ephemeral keeps Prefect's per-process temporary server (the test
  suite uses it, so tests never leave a server running).
- `ablate server status` / `ablate server stop` show and stop the machine server; each run
  that uses it holds a lease (`users/<pid>`, removed at exit), and `stop` refuses while
  another live process holds one (`--force` stops it anyway).

The server is Prefect's own (`python -m uvicorn --factory
prefect.server.api.server:create_app`, the command Prefect uses for its temporary one),
bound to 127.0.0.1, UI off. Each interpreter (each project's venv) and Prefect version has
its own server and state folder (`prefect-server/<prefect version>-<hash of sys.executable>/`),
so two projects on one machine never share, replace or stop each other's server. A server
process that is alive is never replaced because it is slow to answer (a machine under load):
ensure() waits for it, and only a server whose process is gone is started anew. No prefect
import here: this only manages a process.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Iterator

from ablate.flows.env import file_lock, machine_state_dir

MODE_ENV = "ABLATE_PREFECT_SERVER"  # machine (default) | ephemeral
START_TIMEOUT_S = 180.0


def state_dir() -> Path:
    """This interpreter's and Prefect version's own server folder."""
    version, python = _identity()
    key = hashlib.sha256(python.encode()).hexdigest()[:12]
    return machine_state_dir("prefect-server") / f"{version}-{key}"


@dataclass(frozen=True)
class ServerInfo:
    pid: int
    port: int
    prefect: str
    python: str

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"


def _identity() -> tuple[str, str]:
    # sys.executable as the venv names it: venvs' interpreters link to one base Python
    return metadata.version("prefect"), os.path.abspath(sys.executable)


def wanted() -> bool:
    """Whether this process should use the machine server (no user PREFECT_API_URL, and
    not told to use Prefect's temporary one)."""
    return (not os.environ.get("PREFECT_API_URL")
            and os.environ.get(MODE_ENV, "machine").strip().lower() != "ephemeral")


def _healthy(info: ServerInfo, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"{info.api_url}/health", timeout=timeout) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def read_info() -> ServerInfo | None:
    try:
        data = json.loads((state_dir() / "server.json").read_text())
        return ServerInfo(int(data["pid"]), int(data["port"]), str(data["prefect"]),
                          str(data["python"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """One process at a time decides whether to start the server."""
    with file_lock(state_dir() / "server.lock"):
        yield


def _free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _spawn(port: int) -> int:
    """Start Prefect's API server detached from this process (its own session)."""
    folder = state_dir()
    home = folder / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("PREFECT_") and k not in _KEEP)}
    env.update({
        "PREFECT_HOME": str(home), "PREFECT_UI_ENABLED": "0",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_LOGGING_LEVEL": "WARNING",
    })
    log = open(folder / "server.log", "ab")  # noqa: SIM115 (owned by the child)
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "prefect.server.api.server:create_app",
         "--host", "127.0.0.1", "--port", str(port), "--log-level", "error", "--lifespan", "on"],
        cwd=str(folder), env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
        start_new_session=True)
    log.close()
    return proc.pid


_KEEP = ("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS",)


def _is_server(pid: int) -> bool:
    """Whether `pid` is alive and is a Prefect API server (not a process that reused the
    number of a server that died; where /proc is missing, alive is taken as enough)."""
    if not _alive(pid):
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return not Path("/proc/self").exists()
    return b"prefect.server.api.server" in cmdline


def _wait_healthy(info: ServerInfo, timeout: float) -> bool:
    """Whether the server answers before `timeout` s pass or its process ends."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _healthy(info, timeout=min(10.0, max(1.0, deadline - time.monotonic()))):
            return True
        if not _alive(info.pid):
            return False
        time.sleep(0.1)
    return False


def ensure(timeout: float = START_TIMEOUT_S) -> tuple[ServerInfo, bool]:
    """This interpreter's machine server, started when none is running; (info, started
    now). A running one is waited for however slow it is to answer (up to `timeout`),
    never stopped: another run may be using it."""
    version, python = _identity()
    with _locked():
        info = read_info()
        if info is not None and _is_server(info.pid):
            if _wait_healthy(info, timeout):
                return info, False
            raise RuntimeError(
                f"the Prefect server (pid {info.pid}, port {info.port}) is running but did not "
                f"answer within {timeout:.0f} s; `ablate server stop` stops it "
                f"(log {state_dir() / 'server.log'})")
        port = _free_port()
        info = ServerInfo(_spawn(port), port, version, python)
        (state_dir() / "server.json").write_text(json.dumps(info.__dict__) + "\n")
        if _wait_healthy(info, timeout):
            return info, True
        _terminate(info.pid)
        tail = (state_dir() / "server.log").read_text(errors="replace")[-600:]
        raise RuntimeError(f"the Prefect server did not start within {timeout:.0f} s; "
                           f"log {state_dir() / 'server.log'}: {tail}")


def _terminate(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGTERM)
    except OSError:
        return
    for _ in range(50):
        if not _alive(pid):
            return
        try:  # reap it when it is our child
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.1)
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)


def users() -> list[int]:
    """The pids of other live processes using this server (leases taken by join())."""
    folder = state_dir() / "users"
    out = []
    for lease in folder.glob("*") if folder.is_dir() else []:
        pid = int(lease.name) if lease.name.isdigit() else 0
        if pid and pid != os.getpid() and _alive(pid):
            out.append(pid)
        elif pid != os.getpid():
            lease.unlink(missing_ok=True)  # its process is gone
    return sorted(out)


def _lease() -> None:
    """Record that this process uses the server until it exits (`ablate server stop`
    refuses to stop a server in use)."""
    import atexit
    lease = state_dir() / "users" / str(os.getpid())
    lease.parent.mkdir(parents=True, exist_ok=True)
    lease.touch()
    atexit.register(lease.unlink, missing_ok=True)


def stop() -> ServerInfo | None:
    """Stop the machine server; the info of the one stopped, else None."""
    with _locked():
        info = read_info()
        if info is None:
            return None
        if _is_server(info.pid):  # not a process that reused a dead server's number
            _terminate(info.pid)
        (state_dir() / "server.json").unlink(missing_ok=True)
        return info if not _alive(info.pid) else None


class Background:
    """`ensure()` in a thread, so the start overlaps loading data and planning. `join()`
    sets PREFECT_API_URL for this process (call it before prefect is imported)."""

    def __init__(self) -> None:
        self.info: ServerInfo | None = None
        self.started = False
        self.seconds = 0.0
        self.error: BaseException | None = None
        self._thread: threading.Thread | None = None
        if wanted():
            self._thread = threading.Thread(target=self._run, name="prefect-server", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        t0 = time.perf_counter()
        try:
            self.info, self.started = ensure()
        except BaseException as exc:  # reported by join()
            self.error = exc
        self.seconds = time.perf_counter() - t0

    def join(self) -> ServerInfo | None:
        if self._thread is None:
            return None
        self._thread.join()
        if self.error is not None:
            raise self.error
        assert self.info is not None
        _lease()
        os.environ["PREFECT_API_URL"] = self.info.api_url
        return self.info
