"""Per-process run context: the planned sweep (flows/plan/sweep_plan.py) and what running it
needs: the result store, the tokenizer, memos, locks, timings and counters.

Stage tasks receive only keys; they find large data here (built once per process, so a
Dask worker builds its own from the same spec).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ablate.components.runtime.resources import Memo
from ablate.components.text.tokenizer import Tokenizer, get_tokenizer
from ablate.flows.plan.sweep_plan import PlannedSweep, RunOptions, plan_sweep
from ablate.flows.run.store import Store


@dataclass
class RunContext:
    """A planned sweep being run. The plan's fields read through (`ctx.variants`,
    `ctx.plan`, `ctx.questions_of(name)`, ...); nothing here changes them."""

    planned: PlannedSweep
    store: Store
    tokenizer: Tokenizer
    memo: Memo = field(default_factory=Memo)  # keyed memo (components release theirs: runtime/resources.py)
    locks: dict[str, threading.Lock] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)  # stage -> seconds computing
    # timing key -> [stages computed, seconds, units of work (stage_timing.work_units)]
    timings_by: dict[str, list[float]] = field(default_factory=dict)
    stage_times: dict[str, tuple[float, float]] = field(default_factory=dict)  # key -> wall start, end
    # keys of the stages this run computed (the others' results, latencies included, were
    # stored by an earlier run): timings.parquet's reused/ columns
    computed_keys: set[str] = field(default_factory=set)
    counters: dict[str, int] = field(default_factory=dict)
    heavy: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(1))
    started: float = field(default_factory=time.time)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "planned":  # copy/pickle probes; never recurse
            raise AttributeError(name)
        return getattr(self.planned, name)

    def lock(self, name: str) -> threading.Lock:
        with self._lock:
            return self.locks.setdefault(name, threading.Lock())

    def note_timing(self, key: str, seconds: float, units: int) -> None:
        """One computed stage under `key` (stage_timing.timing_key) took `seconds` for `units`
        of work (stage_timing.work_units: its questions, or documents for `chunk`)."""
        with self._lock:
            entry = self.timings_by.setdefault(key, [0, 0.0, 0])
            entry[0] += 1
            entry[1] += seconds
            entry[2] += units

    def note_computed(self, key: str) -> None:
        """The stage of `key` was computed by this run (stages.run_stage)."""
        with self._lock:
            self.computed_keys.add(key)

    def count(self, name: str, n: int = 1) -> None:
        with self._lock:
            self.counters[name] = self.counters.get(name, 0) + n



def build_context(spec_path: str | Path, options: RunOptions) -> RunContext:
    """The sweep planned (plan_sweep: every check before any compute) with its store."""
    planned = plan_sweep(spec_path, options)
    root = Path(options.cache_dir or planned.spec.cache_dir)
    if not root.is_absolute() and options.cache_dir is None:
        root = Path.cwd() / root
    return RunContext(planned=planned, store=Store(root), tokenizer=get_tokenizer())


_CONTEXTS: dict[tuple[str, RunOptions], RunContext] = {}
_CONTEXTS_LOCK = threading.Lock()


def get_context(spec_path: str, options: RunOptions) -> RunContext:
    """The process's context for a spec (built once per process)."""
    key = (str(Path(spec_path).resolve()), options)
    with _CONTEXTS_LOCK:
        ctx = _CONTEXTS.get(key)
        if ctx is None:
            ctx = build_context(spec_path, options)
            _CONTEXTS[key] = ctx
        return ctx


def forget_contexts() -> None:
    with _CONTEXTS_LOCK:
        _CONTEXTS.clear()
