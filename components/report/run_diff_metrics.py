"""Which metrics and verdicts moved between two sweep folders (`ablate diff`): per common
variant and metric, its mean in each run, its Δ against the baseline (stats.parquet) and
its verdict: `better` / `worse` (significant, by the metric's direction), `changed`
(significant, a metric without a direction), `not significant`, or None where the run
did not compare it. A row has `moved` when its verdict differs between the runs."""

from __future__ import annotations

import math
from typing import Any, Sequence

import polars as pl

from ablate.components.contract.vocab import BASELINE
from ablate.components.report.findings import judge
from ablate.components.report.sweep_data import SweepResults, report_stats, variant_means

NOT_SIGNIFICANT = "not significant"


def verdict(metric: str, row: dict[str, Any] | None) -> str | None:
    """A stats row's verdict (None: no row)."""
    if row is None:
        return None
    if not row.get("significant"):
        return NOT_SIGNIFICANT
    return judge(metric, float(row["delta"])) or "changed"


def _rows(stats: pl.DataFrame) -> dict[tuple[str, str], dict[str, Any]]:
    if not stats.height:
        return {}
    return {(r["variant"], r["metric"]): r for r in report_stats(stats).iter_rows(named=True)}


def _number(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return round(x, 6) if math.isfinite(x) else None


def key_metrics(a: SweepResults, b: SweepResults, key: Sequence[str] | None) -> list[str]:
    """The new run's key metrics (or `key`) that both runs have."""
    both = set(a.metrics) & set(b.metrics)
    return [m for m in b.key_metrics(key) if m in both] or [m for m in a.key_metrics(key) if m in both]


def metric_rows(a: SweepResults, b: SweepResults, key: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Rows (variant, metric, mean_old, mean_new, delta_old, delta_new, verdict_old,
    verdict_new, moved, key): every common variant on the key metrics (the baseline's Δ
    and verdict are None), and every other comparison both runs made; variants in
    the new run's order, then metrics."""
    names_a = {str(v.get("name")) for v in a.variants}
    common = [str(v.get("name")) for v in b.variants if str(v.get("name")) in names_a]
    keys = key_metrics(a, b, key)
    sa, sb = _rows(a.stats), _rows(b.stats)
    others = sorted({m for (_, m) in sa} & {m for (_, m) in sb} - set(keys))
    metrics = keys + others
    means_a = variant_means(a.per_query, metrics, a.stats)
    means_b = variant_means(b.per_query, metrics, b.stats)
    out = []
    for name in common:
        for m in metrics:
            ra, rb = sa.get((name, m)), sb.get((name, m))
            if m not in keys and (ra is None or rb is None):
                continue
            va, vb = verdict(m, ra), verdict(m, rb)
            out.append({"variant": name, "metric": m,
                        "mean_old": _number(means_a.get((name, m))),
                        "mean_new": _number(means_b.get((name, m))),
                        "delta_old": _number(ra["delta"]) if ra else None,
                        "delta_new": _number(rb["delta"]) if rb else None,
                        "verdict_old": va, "verdict_new": vb,
                        "moved": name != BASELINE and va != vb, "key": m in keys})
    return out
