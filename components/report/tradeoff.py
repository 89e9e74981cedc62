"""The trade-off front: each variant's primary key quality metric against what it spends,
its P95 end-to-end latency and its cost per question, and which variants no other beats
on both (the Pareto front). Pure functions of the tables a run writes.

Dominance: a variant dominates another on an axis (latency or cost) when its quality is
at least as good (by the metric's direction) and it spends at most as much, and it is
strictly better on one of the two. Two variants equal on both dominate neither: both
stay on the front. A variant without a finite quality or a finite figure on the axis is
not placed on that axis (a cost that was never priced is not a cost of 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import AbstractSet, Sequence

import polars as pl

from ablate.components.contract.vocab import BASELINE
from ablate.components.report.latency import E2E, with_end_to_end

LATENCY, COST = "latency", "cost"
P95 = 0.95
# per question: every online stage at the experiment's prices (components/metrics/cost.py);
# a sweep recorded before cost/total existed has the generator's cost/usd only
COST_COLUMN, GENERATOR_COST = "cost/total", "cost/usd"


@dataclass(frozen=True)
class Point:
    """One variant on the plane: `quality` in the metric's units, `latency` its P95
    end-to-end seconds per question, `cost` its mean USD per question (NaN: not known)."""

    variant: str
    quality: float
    latency: float = math.nan
    cost: float = math.nan

    def spend(self, axis: str) -> float:
        return self.latency if axis == LATENCY else self.cost


def _placed(points: Sequence[Point], axis: str) -> list[Point]:
    return [p for p in points if math.isfinite(p.quality) and math.isfinite(p.spend(axis))]


def dominated_by(points: Sequence[Point], axis: str, lower_better: bool = False
                 ) -> dict[str, list[str]]:
    """For each variant placed on `axis`, the variants that dominate it, in the order
    given ([]: it is on the front); `lower_better`: the quality metric's direction."""
    sign = -1.0 if lower_better else 1.0
    placed = _placed(points, axis)
    out: dict[str, list[str]] = {}
    for p in placed:
        out[p.variant] = [o.variant for o in placed if o is not p
                          and sign * o.quality >= sign * p.quality and o.spend(axis) <= p.spend(axis)
                          and (sign * o.quality > sign * p.quality or o.spend(axis) < p.spend(axis))]
    return out


def pareto_front(points: Sequence[Point], axis: str, lower_better: bool = False) -> list[str]:
    """The variants no other dominates on `axis`, in the order given."""
    return [v for v, by in dominated_by(points, axis, lower_better).items() if not by]


def p95_latency(timings: pl.DataFrame | None) -> dict[str, float]:
    """Per variant, the 95th percentile (linear) over its questions of the end-to-end
    seconds (latency.with_end_to_end: the sum of its stage latencies), as the report's
    latency table; a variant without a finite one is left out."""
    if timings is None or not timings.height:
        return {}
    timings = with_end_to_end(timings)
    col = f"latency/{E2E}"
    if col not in timings.columns:
        return {}
    out: dict[str, float] = {}
    for name in timings["variant"].unique(maintain_order=True).to_list():
        x = timings.filter(pl.col("variant") == name)[col].cast(pl.Float64)
        x = x.filter(x.is_finite())
        q = x.quantile(P95, "linear") if x.len() else None
        if q is not None:
            out[name] = float(q)
    return out


def cost_per_question(per_query: pl.DataFrame) -> dict[str, float]:
    """Per variant, its mean cost per question (cost/total over its finite values, else
    cost/usd: a sweep recorded before cost/total); empty when the sweep priced nothing (no
    column, or every cost 0: prices default to 0, so a sweep of zeros recorded no cost, it
    did not measure a free one)."""
    for col in (COST_COLUMN, GENERATOR_COST):
        if col not in per_query.columns:
            continue
        x = pl.col(col).cast(pl.Float64)
        rows = per_query.select("variant", x.alias("c")).filter(pl.col("c").is_finite())
        if rows.height and (rows["c"] != 0).any():
            break
    else:
        return {}
    means = rows.group_by("variant", maintain_order=True).agg(pl.col("c").mean())
    return {r["variant"]: float(r["c"]) for r in means.iter_rows(named=True)}


def qualities(per_query: pl.DataFrame, stats: pl.DataFrame, metric: str, order: Sequence[str],
              nested: AbstractSet[str] = frozenset(),
              hidden: AbstractSet[tuple[str, str]] = frozenset()) -> dict[str, float]:
    """Per variant of `order`, its mean of `metric` over its finite scores. A variant run on
    its own nested sample (`nested`: manifest questions.per_variant) is placed at the
    baseline's mean plus its paired Δ (stats.parquet), so that every variant stands on the
    baseline's questions; (variant, metric) pairs in `hidden` (a closed-book variant's
    retrieval metrics) and variants without a finite value are left out."""
    if metric not in per_query.columns:
        return {}
    x = pl.col(metric).cast(pl.Float64)
    means = {r["variant"]: r["m"] for r in per_query.filter(x.is_finite()).group_by("variant")
             .agg(x.mean().alias("m")).iter_rows(named=True)}
    delta = {r["variant"]: r["delta"] for r in stats.iter_rows(named=True)
             if r["metric"] == metric} if stats.height else {}
    out: dict[str, float] = {}
    for name in order:
        if (name, metric) in hidden:
            continue
        value = means.get(name)
        if name in nested and name != BASELINE:
            d, base = delta.get(name), means.get(BASELINE)
            value = base + d if d is not None and base is not None else None
        if value is not None and math.isfinite(value):
            out[name] = float(value)
    return out


def ms(seconds: float) -> str:
    """Seconds as milliseconds with one decimal ('–' when not finite)."""
    return f"{seconds * 1e3:.1f}" if math.isfinite(seconds) else "–"


def usd(x: float) -> str:
    """Dollars to four significant digits ('–' when not finite)."""
    return f"{x:.4g}" if math.isfinite(x) else "–"
