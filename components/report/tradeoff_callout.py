"""One sentence per variant that is faster or cheaper than the baseline and not
significantly worse on any key quality metric (no ▼ worse after correction in
stats.parquet), with what the data can promise about its quality: the gate's one-sided
non-inferiority bound of the primary metric's drop (ablate.components.report.gate:
over clusters, Bonferroni over the variants named here). "Not significantly worse" is not
"no worse": the bound says how large a drop is ruled out."""

from __future__ import annotations

import math
from typing import Any, Sequence

import polars as pl

from ablate.components.contract.errors import InputError
from ablate.components.contract.vocab import BASELINE
from ablate.components.report.findings import judge
from ablate.components.report.numbers import fmt, is_significant
from ablate.components.report.tails import quality_metrics
from ablate.components.report.tradeoff import Point, ms, usd
from ablate.components.report.tradeoff_report import Front

# The gate's verdict needs an allowed drop, which a sweep does not have; only the bound
# (independent of it) is read, so any valid margin serves.
ANY_MARGIN = 1.0


def _cheaper_or_faster(p: Point, base: Point) -> list[str]:
    out = []
    if math.isfinite(p.latency) and math.isfinite(base.latency) and p.latency < base.latency:
        out.append(f"faster than the baseline (P95 end to end {ms(p.latency)} vs "
                   f"{ms(base.latency)} ms)")
    if math.isfinite(p.cost) and math.isfinite(base.cost) and p.cost < base.cost:
        out.append(f"cheaper (USD {usd(p.cost)} vs {usd(base.cost)} per question)")
    return out


def _not_worse(stats_rows: dict[tuple[str, str], dict], name: str, metrics: Sequence[str],
               primary: str) -> bool:
    if (name, primary) not in stats_rows:
        return False
    return not any(is_significant(r) and judge(m, r["delta"]) == "worse"
                   for m in metrics if (r := stats_rows.get((name, m))) is not None)


def callouts(front: Front | None, stats: pl.DataFrame, per_query: pl.DataFrame,
             manifest: dict[str, Any], key: Sequence[str]) -> list[str]:
    """The sentences (without a bullet), in the front's order."""
    base = front.point(BASELINE) if front is not None else None
    if front is None or base is None:
        return []
    metrics = quality_metrics(key)
    srows = {(r["variant"], r["metric"]): r for r in stats.iter_rows(named=True)}
    found = [(p, how) for p in front.points if p.variant != BASELINE
             and (how := _cheaper_or_faster(p, base))
             and _not_worse(srows, p.variant, metrics, front.metric)]
    if not found:
        return []
    from ablate.components.report.gate import noninferiority_results
    try:
        bounds = noninferiority_results(per_query, BASELINE,
                                        [(front.metric, p.variant) for p, _ in found], ANY_MARGIN,
                                        manifest.get("statistics") or {}, int(manifest.get("seed", 0)))
    except InputError:  # data the gate refuses (every question in one cluster): the report stands
        return [f"**{p.variant}** is {' and '.join(how)} and not significantly worse on any key "
                f"quality metric ({', '.join(metrics)}); the gate's non-inferiority bound of "
                f"{front.metric} cannot be computed on these questions (`ablate gate` says why)."
                for p, how in found]
    out = []
    for (p, how), b in zip(found, bounds):
        level = f"one-sided {b.confidence:.1%}" + (f", Bonferroni over {len(found)} variants"
                                                   if len(found) > 1 else "")
        if not math.isfinite(b.lower):
            promise = (f"but the gate's non-inferiority bound ({level}) rules out no drop "
                       f"in {front.metric} yet ({b.n} questions in {b.n_clusters} clusters are "
                       "too few)")
        elif b.lower >= 0:
            promise = (f"and the gate's non-inferiority bound ({level}) rules out any drop "
                       f"in {front.metric}")
        else:
            promise = (f"and the gate's non-inferiority bound ({level}) rules out a drop in "
                       f"{front.metric} larger than {fmt(-b.lower)}")
        out.append(f"**{p.variant}** is {' and '.join(how)} and not significantly worse on "
                   f"any key quality metric ({', '.join(metrics)}), {promise}.")
    return out
