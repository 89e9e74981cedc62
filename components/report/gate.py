"""The CI gate: which variants are significantly worse than the baseline on one metric by
more than an allowed drop. 'Worse' is lower, or higher for lower-is-better metrics."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from components.errors import InputError


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
               variant: str | None = None, lower_is_better: bool = False) -> list[GateResult]:
    """One result per compared variant (or the named one); `failed` when significant and
    the change in the bad direction exceeds `max_drop`."""
    if max_drop < 0:
        raise InputError("must be >= 0", field="--max-drop")
    known = sorted(stats["metric"].unique().to_list())
    if metric not in known:
        raise InputError(f"unknown metric '{metric}' (known: {', '.join(known[:12])}"
                         f"{', …' if len(known) > 12 else ''})", field="--metric")
    rows = stats.filter(pl.col("metric") == metric)
    if variant is not None:
        names = rows["variant"].to_list()
        if variant not in names:
            raise InputError(f"unknown variant '{variant}' (compared: {', '.join(names)})",
                             field="--variant")
        rows = rows.filter(pl.col("variant") == variant)
    out = []
    for r in rows.iter_rows(named=True):
        drop = r["delta"] if lower_is_better else -r["delta"]
        sig = bool(r["significant"])
        out.append(GateResult(r["variant"], r["delta"], r["ci_low"], r["ci_high"],
                              r["p_adjusted"], sig, sig and drop > max_drop))
    return out
