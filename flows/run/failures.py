"""A stage that raised, as the one-line RunFailed the CLI prints (issue 39.2).

A stage's own exception (a read-only cache folder, a full disk, a library's error)
reaches the flow through its Prefect future; the flow turns the first such failure into
a RunFailed naming the stage, its key and the cause, and the command that continues:
the same `ablate run`, which reuses every stage that finished (their entries are in the
cache). Bad input found by a stage (InputError) and a RunFailed of its own pass through
unchanged. Stages that never ran because one they depend on failed (Prefect's
UpstreamTaskError) are not the cause and are named only when nothing else failed. The stage
named is the first that failed (by the time its task failed, when known; else in plan
order); a full device (ENOSPC, also as polars or pyarrow word it) is said as such, with
the cache folder and the first stage it stopped (issue 58.8).
A failure that repeats on every rerun with the same inputs (REPEATS: arithmetic, value,
type, key, index, attribute or assertion errors come from the data, the configuration or
the code, not the machine; issue 58.6: an OverflowError of every score stage) is said to
repeat and offers no command; anything else (a full disk, a lost connection, memory, a
library's own error) offers the command that continues.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any, Sequence

from ablate.components.contract.errors import InputError, RunFailed, cause, no_space

REPEATS = (ArithmeticError, ValueError, TypeError, LookupError, AttributeError, AssertionError,
           NotImplementedError, RecursionError)


def continue_command(experiment: str, opts: dict[str, Any]) -> str:
    """The `ablate run` command that continues this sweep (the options that choose its
    stages: tier, split, cache folder)."""
    args = ["ablate", "run", experiment]
    for name in ("tier", "split", "cache_dir"):
        if opts.get(name):
            args += [f"--{name.replace('_', '-')}", str(opts[name])]
    return shlex.join(args)


def stage_failure(plan: Any, failures: Sequence[tuple[str, BaseException]], experiment: str,
                  opts: dict[str, Any], failed_at: dict[str, float] | None = None,
                  cache: Path | None = None) -> BaseException:
    """The exception to raise for the stages of `plan` that failed ((key, exception) in
    plan order; `failed_at`: when each failed, where known; `cache`: the stage cache)."""
    from prefect.exceptions import UpstreamTaskError
    causes = [(k, e) for k, e in failures if not isinstance(e, UpstreamTaskError)] or list(failures)
    full = [(k, e) for k, e in causes if no_space(e)]  # a full device: the likely root
    order = {k: i for i, (k, _) in enumerate(failures)}
    when = failed_at or {}
    key, exc = min(full or causes, key=lambda f: (when.get(f[0], float("inf")), order[f[0]]))
    if isinstance(exc, (InputError, RunFailed)):
        return exc
    node = plan.nodes[key]
    others = len(failures) - 1
    more = f" ({others} other stage{'s' if others != 1 else ''} failed or did not run)" if others else ""
    hint = continue_command(experiment, opts)
    if full:
        where = f" ({cache})" if cache is not None else ""
        return RunFailed(f"no space left on the cache device{where}: stage {node.label} "
                         f"{key[:10]} failed first{more}; the stages that finished are in the "
                         "cache; free some space (`ablate cache prune`) or give --cache-dir "
                         "on another device", hint=hint)
    if isinstance(exc, REPEATS):
        return RunFailed(f"stage {node.label} {key[:10]} failed ({cause(exc)}){more}; the stages "
                         "that finished are in the cache, but a rerun fails the same way: "
                         f"{type(exc).__name__} comes from the data, the experiment file or "
                         "a component, not the machine")
    return RunFailed(f"stage {node.label} {key[:10]} failed ({cause(exc)}){more}; the stages "
                     "that finished are in the cache", hint=hint)


def failure_time(future: Any) -> float | None:
    """When a stage's Prefect task ended Failed (its state's timestamp, epoch seconds);
    None when the future does not say."""
    try:
        return float(future.state.timestamp.timestamp())
    except Exception:  # noqa: BLE001 - a future without a state: plan order decides
        return None


def exit_called(exc: SystemExit) -> str:
    """What a stage says when a component called sys.exit: the code and the plugin whose
    code called it (components.plugins.plugin_of)."""
    from ablate.components.contract.plugins import plugin_of
    who = plugin_of(exc)
    by = f"plugin '{who}'" if who else "a component"
    return f"{by} called sys.exit({exc.code!r}) inside the stage"
