"""The report's judge-corrected estimates beside the judge's own (stats.parquet's `ppi/`
rows, ablate.components.stats.ppi_compare): per variant and judged metric, the judge's
mean difference against the baseline next to the prediction-powered corrected one, its
interval and corrected p, and the labels it rests on."""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from ablate.components.report.numbers import fmt, fmt_p, fmt_signed

PREFIX = "ppi/"


def _ci(r: dict[str, Any]) -> str:
    lo, hi = r.get("ci_low"), r.get("ci_high")
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        reason = r.get("ppi_reason") or "undefined"
        return f"– ({reason})"
    return f"[{fmt(lo)}, {fmt(hi)}]"


def corrected_lines(stats: pl.DataFrame) -> list[str]:
    """The section's lines; [] when the sweep has no judge-corrected rows."""
    if not stats.height or "raw_metric" not in stats.columns:
        return []
    rows = stats.filter(pl.col("metric").str.starts_with(PREFIX)).sort("raw_metric", "variant")
    if not rows.height:
        return []
    raw = {(r["variant"], r["metric"]): r for r in stats.iter_rows(named=True)}
    out = ["### Judge-corrected estimates", "",
           "Each judged metric that `judge.labels` labels, corrected by prediction-powered "
           "inference: the labelled answers measure the judge's bias, which is removed, and "
           "its noise, which widens the interval (rows `ppi/<metric>` in stats.parquet, in the "
           "same correction as every metric). A judge that disagrees with the labels gives a "
           "wide interval rather than a wrong conclusion.", "",
           "| variant | metric | judge: baseline → variant | corrected: baseline → variant "
           "| judge Δ | corrected Δ | corrected CI | p adj | labelled (questions / clusters) |",
           "|---|---|---:|---:|---:|---:|---|---:|---:|"]
    for r in rows.iter_rows(named=True):
        j = raw.get((r["variant"], r["raw_metric"]), {})
        judged = (f"{fmt(j.get('mean_baseline'))} → {fmt(j.get('mean_variant'))}" if j else "–")
        sig = " ✓" if r.get("significant") else ""
        out.append(
            f"| {r['variant']} | {r['raw_metric']} | {judged} "
            f"| {fmt(r.get('mean_baseline'))} → {fmt(r.get('mean_variant'))} "
            f"| {fmt_signed(r.get('raw_delta'))} | {fmt_signed(r.get('delta'))}{sig} | {_ci(r)} "
            f"| {fmt_p(r.get('p_adjusted'))} | {r.get('n_labelled')} / {r.get('clusters_labelled')} |")
    out += ["", "✓ significant after the correction; the interval is at the level that "
            "matches the corrected p (it excludes 0 exactly when significant). The corrected "
            "means are separate estimates (each on its own labels); the corrected Δ is the "
            "paired one, so they need not differ by Δ."]
    return out
