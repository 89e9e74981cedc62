"""Ctrl-C and SIGTERM stop `ablate run` at once, at any stage, and say how to resume.

Python's default turns Ctrl-C into KeyboardInterrupt in the main thread only: the stages
run on the task runner's worker threads (a local model generating, an encoder encoding),
which carry on, and the interpreter waits for them at exit; Prefect's own SIGTERM handling
also waits for the flow run to wind down. So a sweep could not be stopped but by SIGKILL.

`install(resume)` replaces both handlers for the rest of the process: on the signal it
prints one line (what stopped, that finished stages stay in the cache, the command that
resumes), asks this process's child processes (Prefect's temporary server, Dask workers, a
local model server) to stop, and ends the process with 128 + the signal's number (130 for
Ctrl-C, 143 for SIGTERM). Nothing finished is lost: every cache entry is written to a
temporary file and renamed into place (flows/run/store.py), which a sudden end leaves
whole or absent (tests/e2e/test_kill_resume.py kills with SIGKILL at each stage), and the
next `ablate run` of the same command reuses what is there.

Prefect swaps in its own SIGTERM handler while a flow runs (it raises in the main thread
and waits for the flow run to wind down: minutes while a worker thread generates).
`keep_prefect_out()`, called once prefect may be imported, makes Prefect install this
handler instead (its module-level `_prefect_sigterm_handler`, looked up at each flow run).
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Any, Callable

NAMES = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}
_state: dict[str, str] = {}


def install(resume: str) -> Callable[[], None]:
    """Stop the process on Ctrl-C or SIGTERM, printing `resume` as the command that
    continues (main thread only: elsewhere, nothing is changed); returns the function that
    puts the previous handlers back (a CLI command called in-process, as by tests)."""
    _state["resume"] = resume
    saved: dict[int, Any] = {}
    try:
        for sig in NAMES:
            saved[sig] = signal.signal(sig, _stop)
    except ValueError:  # not the main thread (a test calling the CLI from a thread)
        pass

    def restore() -> None:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
    return restore


def keep_prefect_out() -> None:
    """Prefect's flow runs install this module's handler for SIGTERM instead of their own
    (after install(); imports prefect)."""
    from prefect.utilities import engine
    if "resume" in _state and hasattr(engine, "_prefect_sigterm_handler"):
        engine._prefect_sigterm_handler = _stop  # type: ignore[assignment]


def message(signum: int) -> str:
    return (f"ablate: interrupted ({NAMES.get(signal.Signals(signum), str(signum))}): stages "
            f"that finished are kept in the cache; resume with: {_state.get('resume', '')}\n")


def children(pid: int) -> list[int]:
    """The descendants of `pid`, children first (Linux /proc; elsewhere none)."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            ppid = int(text[text.rindex(")") + 2:].split()[1])
            parents.setdefault(ppid, []).append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    out: list[int] = []
    todo = list(parents.get(pid, []))
    while todo:
        child = todo.pop(0)
        out.append(child)
        todo.extend(parents.get(child, []))
    return out


def _stop(signum: int, frame: FrameType | None) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, RuntimeError):  # closed, or interrupted mid-write
            pass
    os.write(2, message(signum).encode())
    session = os.getsid(0)
    for child in children(os.getpid()):
        try:  # not the machine's Prefect server (its own session: other runs use it)
            if os.getsid(child) != session:
                continue
            os.kill(child, signal.SIGTERM)
        except OSError:
            pass
    os._exit(128 + signum)
