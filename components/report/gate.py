"""The CI gate: which variants are significantly worse than the baseline on one metric by
more than an allowed drop. 'Worse' follows the metric's declared direction: lower for
higher-is-better metrics, higher for lower-is-better ones (latency, cost, false
acceptance); a metric with no better direction cannot be gated."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ablate.components.errors import InputError
from ablate.components.metrics.registry import direction


@dataclass(frozen=True)
class GateResult:
    variant: str
    delta: float
    ci_low: float
    ci_high: float
    p_adjusted: float
    significant: bool
    failed: bool


def check_gate(stats: pl.DataFrame, metric: str, max_drop: float = 0.0,
               variant: str | None = None) -> list[GateResult]:
    """One result per compared variant (or the named one); `failed` when significant and
    the change in the bad direction exceeds `max_drop`."""
    if max_drop < 0:
        raise InputError("must be >= 0", field="--max-drop")
    known = sorted(stats["metric"].unique().to_list())
    if metric not in known:
        raise InputError(f"unknown metric '{metric}' (known: {', '.join(known[:12])}"
                         f"{', …' if len(known) > 12 else ''})", field="--metric")
    better = direction(metric)
    if better == "none":
        raise InputError(f"metric '{metric}' has no better direction, so it cannot be gated",
                         field="--metric")
    rows = stats.filter(pl.col("metric") == metric)
    if variant is not None:
        names = rows["variant"].to_list()
        if variant not in names:
            raise InputError(f"unknown variant '{variant}' (compared: {', '.join(names)})",
                             field="--variant")
        rows = rows.filter(pl.col("variant") == variant)
    out = []
    for r in rows.iter_rows(named=True):
        drop = r["delta"] if better == "lower" else -r["delta"]
        sig = bool(r["significant"])
        out.append(GateResult(r["variant"], r["delta"], r["ci_low"], r["ci_high"],
                              r["p_adjusted"], sig, sig and drop > max_drop))
    return out
