"""The summary of a baseline-only run: the way the docs make a gate reference (`ablate gate
--reference`, a gated deployment), where there is nothing to compare. It says what the run
has (issue 54: it printed an empty table): each key metric's mean with a cluster-robust
interval (mean ± t x the CR2 cluster-robust SE, Bell-McCaffrey df: the same estimator the
paired t intervals and the gate's margin use, ablate.components.stats.clusters, here on the
values instead of their differences), the questions it is defined on in how many clusters,
and that the run is a reference."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import polars as pl

from ablate.components.contract.vocab import BASELINE
from ablate.components.report.numbers import fmt
from ablate.components.stats.clusters import cluster_column, cluster_se, cluster_sums

LEVEL = 0.95


def mean_interval(values: np.ndarray, clusters: np.ndarray | None,
                  level: float = LEVEL) -> tuple[float, float, float, int]:
    """(mean, low, high, clusters) of `values` (finite), clusters as the unit (each
    question its own without `clusters`); low/high NaN below 2 clusters."""
    mean, _, low, high, g = mean_se_interval(values, clusters, level)
    return mean, low, high, g


def mean_se_interval(values: np.ndarray, clusters: np.ndarray | None,
                     level: float = LEVEL) -> tuple[float, float, float, float, int]:
    """(mean, its CR2 cluster-robust standard error, low, high, clusters): mean_interval
    with the standard error it is built from (NaN below 2 clusters)."""
    from scipy.stats import t as student_t
    if not values.size:
        return math.nan, math.nan, math.nan, math.nan, 0
    keys = np.arange(values.size) if clusters is None else clusters
    codes = np.unique(keys, return_inverse=True)[1].reshape(-1)
    y = values.astype(np.float64)[:, None]
    theta, se, df = cluster_se(*cluster_sums(y, np.ones_like(y, dtype=bool), codes))
    g = int(codes.max()) + 1
    if g < 2 or not math.isfinite(float(se[0])):
        return float(theta[0]), math.nan, math.nan, math.nan, g
    half = float(student_t.ppf(0.5 + level / 2, float(df[0])) * se[0])
    return float(theta[0]), float(se[0]), float(theta[0]) - half, float(theta[0]) + half, g


def reference_rows(per_query: pl.DataFrame, key: Sequence[str], manifest: dict[str, Any]
                   ) -> list[tuple[str, float, float, float, int, int | None]]:
    """(metric, mean, low, high, questions, clusters or None) of each key metric the
    baseline has, over the questions that define it."""
    rows = per_query.filter(pl.col("variant") == BASELINE)
    col = cluster_column((manifest.get("statistics") or {}).get("cluster"), rows.columns)
    out = []
    for m in [m for m in key if m in rows.columns]:
        ok = rows.filter(pl.col(m).is_not_null() & pl.col(m).is_not_nan())
        clusters = ok[col].cast(pl.String).to_numpy() if col else None
        mean, low, high, g = mean_interval(ok[m].cast(pl.Float64).to_numpy(), clusters)
        out.append((m, mean, low, high, ok.height, g if col else None))
    return out


def _ci(low: float, high: float) -> str:
    return f"[{fmt(low)}, {fmt(high)}]" if math.isfinite(low) else "(too few clusters)"


def _n(n: int, g: int | None) -> str:
    return f"{n} questions in {g} clusters" if g is not None else f"{n} questions"


GATE_HINT = ("Gate a later sweep against this folder: ablate gate SWEEP_DIR --reference "
             "<this folder> --max-drop D")


def reference_summary(per_query: pl.DataFrame, key: Sequence[str],
                      manifest: dict[str, Any]) -> str:
    """summary.txt of a run with the baseline alone."""
    rows = reference_rows(per_query, key, manifest)
    n_all = per_query.filter(pl.col("variant") == BASELINE).height
    width = max([len(r[0]) for r in rows] + [len("metric")]) + 2
    clustered = any(r[5] is not None for r in rows)
    unit = "clusters" if clustered else "questions, each its own unit"
    lines = [f"baseline only: a reference, nothing compared ({n_all} questions). {GATE_HINT}",
             "", "metric".ljust(width) + f"mean   {100 * LEVEL:.0f}% CI (cluster-robust t)   n",
             "-" * (width + 44)]
    for m, mean, low, high, n, g in rows:
        lines.append(f"{m.ljust(width)}{fmt(mean)}  {_ci(low, high).ljust(28)}{_n(n, g)}")
    lines.append(f"(the unit of each interval: {unit}; a metric is counted on the questions "
                 "that define it)")
    return "\n".join(lines)


def reference_section(per_query: pl.DataFrame, key: Sequence[str],
                      manifest: dict[str, Any]) -> list[str]:
    """The report's overview of a run with the baseline alone: the same figures as
    summary.txt, as a table (there is no comparison to plot or test)."""
    lines = ["Baseline only: a reference, nothing compared. Gate a later sweep against this "
             "folder: `ablate gate SWEEP_DIR --reference <this folder> --max-drop D`.",
             "", f"| metric | mean | {100 * LEVEL:.0f}% CI (cluster-robust t) | n |",
             "|---|---:|---|---|"]
    for m, mean, low, high, n, g in reference_rows(per_query, key, manifest):
        lines.append(f"| {m} | {fmt(mean)} | {_ci(low, high)} | {_n(n, g)} |")
    return lines
