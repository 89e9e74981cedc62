"""What the MLflow runs of a sweep carry, computed from the sweep folder's tables (no MLflow).

Compare-first: a child run, the baseline's included, carries what a person compares
across runs: the means of the last retrieval stage's metrics (`final/`; `reranked/` or
`candidates/` for a pipeline without a context stage) and of the answer, refusal, token,
cost and latency metrics, named as `final/ndcg_at_10`, `answer/f1`; the mean of every key
metric whatever its stage; `delta/`, `ci_low/`, `ci_high/`, `p_adj/`, `n/` and `clusters/`
(the independent units the comparison rests on) of the key metrics only; and `questions`,
how many it ran on. So MLflow's Compare view and parallel coordinates show the scores by
variant, not only differences, in dozens of panels, not hundreds. Everything else (the
other candidates/reranked means, the comparison of every metric) is on the parent: the
full comparison table as an MLflow table (`comparison.json`, `mlflow.log_table` format)
and as `comparison.parquet`.
"""

from __future__ import annotations

import calendar
import math
import time
from typing import Any, Sequence

import polars as pl

from ablate.components.metrics.registry import is_timing
from ablate.components.report.markdown import E2E, with_end_to_end
from ablate.components.report.sweep_data import SweepResults

COMPARISONS = {"delta": "delta", "ci_low": "ci_low", "ci_high": "ci_high", "p_adjusted": "p_adj",
               "n_used": "n", "n_clusters": "clusters"}  # n: the questions the comparison used
# (a sweep may set its own), clusters: the clusters they come in
RETRIEVAL_STAGES = ("candidates", "reranked", "final")  # in pipeline order


def created_ms(manifest: dict[str, Any]) -> int:
    """The sweep's creation time (manifest `created`, UTC) in ms since the epoch; 0 if absent."""
    try:
        return calendar.timegm(time.strptime(manifest["created"], "%Y-%m-%dT%H:%M:%SZ")) * 1000
    except (KeyError, ValueError):
        return 0


def _float_mean(col: pl.Series) -> float | None:
    """The mean of a Float64 column as a float; None when it has no non-null value."""
    m = col.mean()
    return float(m) if isinstance(m, (int, float)) else None


def variant_metrics(per_query: pl.DataFrame, stats: pl.DataFrame, timings: pl.DataFrame | None,
                    name: str, key_metrics: Sequence[str] | None = None) -> dict[str, float]:
    """What a child run carries: the mean of each metric a person compares (defined values
    only: the last retrieval stage's, the non-retrieval ones and every key metric), mean
    latency per stage and end to end, the index's build and search seconds (`index/`), and
    the comparison with the baseline for the key metrics (all metrics when None)."""
    rows = per_query.filter(pl.col("variant") == name)
    out: dict[str, float] = {"questions": float(rows.height)}
    key = None if key_metrics is None else set(key_metrics)
    stages = {c.split("/", 1)[0] for c in rows.columns if "/" in c}
    last = next((s for s in reversed(RETRIEVAL_STAGES) if s in stages), None)
    for col in rows.columns:
        stage = col.split("/", 1)[0]
        if ("/" in col and rows[col].dtype.is_numeric()
                and (stage not in RETRIEVAL_STAGES or stage == last
                     or key is None or col in key)):
            m = _float_mean(rows[col].cast(pl.Float64).fill_nan(None))
            if m is not None:
                out[col] = m
    if timings is not None:
        t = timings.filter(pl.col("variant") == name)
        lat = [c for c in t.columns if c.startswith("latency/")]
        for col in [c for c in t.columns if is_timing(c)]:  # latency/ and index/ seconds
            if t.height:
                m = _float_mean(t[col].cast(pl.Float64).fill_nan(None))
                if m is not None:
                    out[col] = m
        if lat and t.height:
            total = with_end_to_end(t.with_columns(pl.col(lat).cast(pl.Float64)))[f"latency/{E2E}"]
            total_mean = _float_mean(total)
            if total.drop_nulls().len() and total_mean is not None:
                out["latency/total"] = total_mean
    for r in stats.filter(pl.col("variant") == name).iter_rows(named=True):
        if key is not None and r["metric"] not in key:
            continue
        for field, prefix in COMPARISONS.items():
            if r.get(field) is not None:
                out[f"{prefix}/{r['metric']}"] = float(r[field])
    return out


def reused_latencies(timings: pl.DataFrame | None, name: str) -> str:
    """A child run's `latency_reused` tag: the stages whose latency/ figures were recorded
    when the result was computed rather than timed by this run (timings.parquet's
    `reused/<stage>`), with the share of questions, e.g. "retrieve_dense 40%, generate
    100%"; "" when every latency was timed now."""
    if timings is None:
        return ""
    t = timings.filter(pl.col("variant") == name)
    parts = []
    for col in (c for c in t.columns if c.startswith("reused/")):
        share = t[col].cast(pl.Float64).fill_null(0.0).mean() if t.height else 0.0
        if isinstance(share, float) and share > 0:
            parts.append(f"{col.removeprefix('reused/')} {share:.0%}")
    return ", ".join(parts)


def comparison_table(res: SweepResults) -> pl.DataFrame:
    """Every variant x metric comparison with its swept variable and value: the parent's
    table (what the children no longer carry one metric at a time)."""
    meta = pl.DataFrame({"variant": [v["name"] for v in res.variants],
                         "variable": [v["variable"] or "" for v in res.variants],
                         "value": [v["value_label"] or "" for v in res.variants]})
    return meta.join(res.stats, on="variant", how="inner")


def _seconds_to_ms(t: float) -> int:
    return int(round(t * 1000))


def _busy_seconds(spans: list[tuple[float, float]]) -> float:
    """The length of the union of (start, end) intervals: stages that ran at the same time
    count once, the time between them (other variants' stages) not at all."""
    total, reach = 0.0, -math.inf
    for s, e in sorted(spans):
        if e > reach:
            total += e - max(s, reach)
            reach = e
    return total


def run_times(res: SweepResults) -> tuple[tuple[int, int], dict[str, tuple[int, int]]]:
    """(parent start, end) in ms and per variant (start, end): it starts when the first
    stage computed for it started and lasts as long as those stages ran (the union of
    their intervals), so its duration is its own compute, not the sweep's wall time
    between its first and last stage; a variant with none computed gets (sweep start,
    sweep start)."""
    man = res.manifest
    end = created_ms(man)
    start = end - int(round(float(man.get("wall_seconds") or 0) * 1000))
    times = (man.get("stages") or {}).get("times") or {}
    out: dict[str, tuple[int, int]] = {}
    for v in res.variants:
        spans = [times[k] for k in (v.get("stage_keys") or {}).values() if k in times]
        if spans:
            first = min(s for s, _ in spans)
            out[v["name"]] = (_seconds_to_ms(first),
                              _seconds_to_ms(first + _busy_seconds([(s, e) for s, e in spans])))
        else:
            out[v["name"]] = (start, start)
    return (start, end), out


def judge_run_data(man: dict[str, Any]) -> tuple[dict[str, Any], dict[str, float]]:
    """The parent run's judge params (its config, prompt version) and calibration metrics."""
    judge = man.get("judge")
    if not judge:
        return {}, {}
    params = {f"judge.{k}": v for k, v in judge.get("config", {}).items()}
    params["judge.prompts"] = judge["prompts"]["version"]
    cal = judge.get("calibration") or {}
    metrics = {f"judge/calibration_{k}": cal[k] for k in ("agreement", "kappa") if k in cal}
    for kind, s in (cal.get("by_kind") or {}).items():
        metrics[f"judge/calibration_{kind}_agreement"] = s["agreement"]
    return params, metrics
