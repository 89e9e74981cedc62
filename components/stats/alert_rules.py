"""Alert rules over a series of runs of one experiment, as pure functions: each reads the
series up to the latest run and returns a Finding (`alert`, `warn` or `ok`, the run it is
about, a one-line message). The experiment file's `alerts:` section names them
(flows/plan/spec_alerts.py); docs/statistics.md#alerts-over-many-runs says what each
guarantees.

- threshold: the latest run's key metric against a fixed level, with its interval: alert
  when the interval's upper bound is below the level, warn when only the mean is. Its
  false-alarm probability is per run: looked at every night it grows with the nights.
- declines: the latest N run-to-run changes are all declines (strictly lower means).
- failed_gate: the latest run's gate verdict failed.
- drop: the anytime-valid rule of components/stats/monitor.py over the whole series.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal, Sequence

from ablate.components.stats.monitor import (
    RunPoint,
    drop_z,
    eprocess_fresh,
    eprocess_shared,
    first_alarm,
    naive_z,
)

Level = Literal["alert", "warn", "ok"]
QUESTIONS = ("shared", "fresh")


@dataclass(frozen=True)
class Finding:
    """What a rule says about a series: its level, the run (index in the series) that
    fired it (None when quiet), and a one-line message."""

    level: Level
    run: int | None
    message: str


def _ok(message: str) -> Finding:
    return Finding("ok", None, message)


def threshold(points: Sequence[RunPoint], below: float, alpha: float) -> Finding:
    """The latest run against `below`: alert when its upper bound (the recorded one, else
    mean + z_{1-alpha/2} se: the two-sided 1-alpha normal interval) is below, warn when
    only its mean is."""
    if not points:
        return _ok("no runs yet")
    t, p = len(points) - 1, points[-1]
    upper = p.upper if p.upper is not None else p.mean + NormalDist().inv_cdf(1 - alpha / 2) * p.se
    where = f"mean {p.mean:.4g} (upper bound {upper:.4g})"
    if upper < below:
        return Finding("alert", t, f"{where} below {below:g}")
    if p.mean < below:
        return Finding("warn", t, f"{where}: the mean is below {below:g}, the interval is not")
    return _ok(f"{where} not below {below:g}")


def declines(points: Sequence[RunPoint], n: int) -> Finding:
    """Alert when each of the latest `n` runs has a strictly lower mean than the run
    before it."""
    if len(points) < n + 1:
        return _ok(f"{len(points)} runs: fewer than {n + 1}")
    tail = [p.mean for p in points[-(n + 1):]]
    if all(b < a for a, b in zip(tail, tail[1:])):
        path = " > ".join(f"{m:.4g}" for m in tail)
        return Finding("alert", len(points) - 1, f"{n} declines in a row: {path}")
    return _ok(f"not {n} declines in a row")


def failed_gate(passed: Sequence[bool]) -> Finding:
    """Alert when the latest run's gate verdict is a failure (`passed` per run)."""
    if not passed:
        return _ok("no gate verdict yet")
    if not passed[-1]:
        return Finding("alert", len(passed) - 1, "the gate failed")
    return _ok("the gate passed")


def drop(points: Sequence[RunPoint], margin: float, reference: float | None, alpha: float,
         questions: str, anytime: bool = True) -> Finding:
    """Alert when the series shows the metric below `reference - margin` (reference None:
    the first run's mean): anytime, the e-process for `questions` (`fresh` or `shared`)
    reaching 1/alpha at some run so far; not anytime, the latest run's one-sided test at
    alpha alone."""
    if questions not in QUESTIONS:
        raise ValueError(f"questions must be one of {QUESTIONS}, not '{questions}'")
    if not points:
        return _ok("no runs yet")
    ref = points[0].mean if reference is None else reference
    z = drop_z(points, ref, margin)
    line = f"{ref - margin:.4g} (reference {ref:.4g} less margin {margin:g})"
    if not anytime:
        t = len(points) - 1
        if z[t] >= naive_z(alpha):
            return Finding("alert", t, f"mean {points[t].mean:.4g} significantly below {line} "
                                       f"at alpha {alpha:g} (this run alone)")
        return _ok(f"the latest run is not significantly below {line}")
    log_e = eprocess_fresh(z) if questions == "fresh" else eprocess_shared(z)
    hit = first_alarm(log_e, alpha)
    if hit is not None:
        return Finding("alert", hit, f"below {line} since run {hit}: e-value "
                                     f"{_fmt_e(log_e[hit])} >= 1/alpha = {1 / alpha:g} "
                                     f"({questions} questions)")
    return _ok(f"not shown below {line}: e-value {_fmt_e(log_e[-1])} < {1 / alpha:g}")


def _fmt_e(log_e: float) -> str:
    return f"{math.exp(log_e):.3g}" if log_e < 700 else f"e^{log_e:.0f}"
