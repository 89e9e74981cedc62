"""The trend of an experiment across its recorded runs (`ablate trend`): one row per run and
key metric, for one variant (the baseline by default), with

- the run's mean and its 95% cluster-robust interval (mean ± t × the CR2 cluster-robust
  SE, Bell-McCaffrey df: reference_summary.mean_interval, the summary of a baseline-only
  run), over the questions that define the metric, with how many clusters they come in;
- the step from the run before: the two runs' scores paired on the questions they share
  (the newer run's clusters, as a gate against a reference takes the sweep's), compared
  by the statistics engine exactly as a variant against the baseline
  (ablate.components.stats.compare_variants with the newer run's `statistics`: its test,
  interval, alpha and seed; one family over the trended metrics of that step, its
  correction), so Δ, its interval, the corrected p and the verdict (`better`, `worse`,
  `changed`, `not significant`: run_diff_metrics.verdict) mean what they mean in a
  report; and how many questions the two runs share, and how many each has alone.

Runs are ordered by their manifests' `created` (then their label). The table is what
`trend.parquet` holds; trend_text.py prints it, trend_svg.py draws it.
"""

from __future__ import annotations

import difflib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import polars as pl

from ablate.components.contract.errors import InputError
from ablate.components.contract.vocab import BASELINE
from ablate.components.report.run_diff_metrics import verdict
from ablate.components.report.sweep_data import REQUIRED, SweepResults
from ablate.components.stats.clusters import cluster_column

LEVEL = 0.95
PREVIOUS, CURRENT = "previous", "current"
SCHEMA: dict[str, Any] = {
    "run": pl.Int64, "label": pl.String, "sweep_id": pl.String, "created": pl.String,
    "experiment": pl.String, "fingerprint": pl.String, "variant": pl.String,
    "metric": pl.String, "questions": pl.Int64, "n": pl.Int64, "clusters": pl.Int64,
    "mean": pl.Float64, "se": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64, "ci_level": pl.Float64,
    "shared": pl.Int64, "only_previous": pl.Int64, "only_current": pl.Int64,
    "delta": pl.Float64, "delta_ci_low": pl.Float64, "delta_ci_high": pl.Float64,
    "p_adjusted": pl.Float64, "significant": pl.Boolean, "n_used": pl.Int64,
    "n_clusters": pl.Int64, "test": pl.String, "correction": pl.String, "verdict": pl.String,
}


@dataclass(frozen=True)
class TrendRun:
    """One recorded run: where it comes from (a folder, an MLflow run id) and its results."""

    label: str
    results: SweepResults


def run_folders(root: Path, experiment: str) -> list[Path]:
    """The finished sweep folders of `experiment` (manifest `experiment`) under the output
    root `root`, sorted by path; folders being written (dot names), incomplete ones and
    unreadable manifests are skipped."""
    found = []
    for man_path in sorted(Path(root).glob("*/manifest.json")):
        folder = man_path.parent
        if folder.name.startswith(".") or not all((folder / f).is_file() for f in REQUIRED):
            continue
        try:
            man = json.loads(man_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(man, dict) and man.get("experiment") == experiment and not man.get("incomplete"):
            found.append(folder)
    return found


def ordered(runs: Sequence[TrendRun]) -> list[TrendRun]:
    """Oldest first: by the manifest's `created`, then the label."""
    return sorted(runs, key=lambda r: (str(r.results.manifest.get("created") or ""), r.label))


def _variants(res: SweepResults) -> list[str]:
    return res.per_query["variant"].unique().to_list() if "variant" in res.per_query.columns else []


def _check(runs: Sequence[TrendRun], variant: str, metrics: Sequence[str] | None) -> list[str]:
    if not any(variant in _variants(r.results) for r in runs):
        known = sorted({v for r in runs for v in _variants(r.results)})
        raise InputError(f"no variant '{variant}' in any run (variants: {', '.join(known)})",
                         field="--variant")
    columns = sorted({c for r in runs for c in r.results.per_query.columns if "/" in c})
    for m in metrics or []:
        if m not in columns:
            near = difflib.get_close_matches(m, columns, n=1, cutoff=0.5)
            hint = f"; did you mean {near[0]}?" if near else ""
            raise InputError(f"unknown metric '{m}' (in no run){hint}", field="--metric")
    if metrics:
        return list(dict.fromkeys(metrics))
    newest = runs[-1].results
    return [m for m in newest.key_metrics() if m in columns]


def _run_stats(wide: pl.DataFrame, metric: str) -> dict[str, Any]:
    """The run's mean of `metric` over the questions that define it, with its interval."""
    from ablate.components.report.reference_summary import mean_se_interval
    rows = wide.filter(pl.col(metric).is_finite())
    clusters = rows["cluster"].to_numpy() if rows["cluster"].null_count() == 0 else None
    mean, se, low, high, g = mean_se_interval(rows[metric].to_numpy(), clusters, LEVEL)
    fin = [x if math.isfinite(x) else None for x in (mean, se, low, high)]
    return {"n": rows.height, "clusters": g, "mean": fin[0], "se": fin[1], "ci_low": fin[2],
            "ci_high": fin[3], "ci_level": LEVEL}


def _wide(res: SweepResults, variant: str, metrics: Sequence[str]) -> pl.DataFrame:
    """The variant's rows: qid, cluster (or None), each metric as Float64 (null where the
    run lacks it)."""
    pq = res.per_query
    if "variant" not in pq.columns:
        return pl.DataFrame(schema={"qid": pl.String, "cluster": pl.String,
                                    **{m: pl.Float64 for m in metrics}})
    col = cluster_column((res.manifest.get("statistics") or {}).get("cluster"), pq.columns)
    return pq.filter(pl.col("variant") == variant).select(
        pl.col("qid").cast(pl.String),
        (pl.col(col).cast(pl.String) if col and col in pq.columns
         else pl.lit(None, dtype=pl.String)).alias("cluster"),
        *[(pl.col(m).cast(pl.Float64) if m in pq.columns else pl.lit(None, dtype=pl.Float64)).alias(m)
          for m in metrics])


def _step(prev: pl.DataFrame, cur: pl.DataFrame, res: SweepResults,
          metrics: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per metric: the paired comparison of the newer run (`cur`) with the older one
    (`prev`) on the questions both define it on (see the module docstring)."""
    from ablate.components.stats import compare_variants
    common = cur.join(prev.select("qid"), on="qid", how="semi")
    older = prev.drop("cluster").join(common.select("qid", "cluster"), on="qid")
    usable = [m for m in metrics
              if common.select("qid", m).join(older.select("qid", pl.col(m).alias("o")), on="qid")
              .filter(pl.col(m).is_finite() & pl.col("o").is_finite()).height]
    if not usable:
        return {}
    table = pl.concat([older.with_columns(variant=pl.lit(PREVIOUS)),
                       common.with_columns(variant=pl.lit(CURRENT))], how="diagonal_relaxed")
    clustered = table["cluster"].null_count() == 0
    st = res.manifest.get("statistics") or {}
    found = compare_variants(
        table, baseline=PREVIOUS, metrics=usable, test=st.get("test", "permutation"),
        correction=st.get("correction", "holm"), alpha=float(st.get("alpha", 0.05)),
        resamples=int(st.get("resamples", 10_000)),
        bootstrap_resamples=int(st.get("bootstrap_resamples", 10_000)),
        ci_method=st.get("ci_method", "inversion"), seed=int(res.manifest.get("seed", 0)),
        cluster_col="cluster" if clustered else None, family="all")
    out: dict[str, dict[str, Any]] = {}
    for r in found.iter_rows(named=True):
        out[r["metric"]] = {
            "delta": r["delta"], "delta_ci_low": r["ci_low"], "delta_ci_high": r["ci_high"],
            "p_adjusted": r["p_adjusted"], "significant": bool(r["significant"]),
            "n_used": r["n_used"], "n_clusters": r["n_clusters"], "test": r["test"],
            "correction": r["correction"], "verdict": verdict(r["metric"], r)}
    return out


def trend_table(runs: Sequence[TrendRun], variant: str | None = None,
                metrics: Sequence[str] | None = None) -> pl.DataFrame:
    """One row per run and metric (columns SCHEMA), metrics in the order asked (default:
    the newest run's key metrics), runs oldest first; InputError on no runs, a variant no
    run has, a metric no run has. A run without the variant or the metric has n 0 and no
    mean; a step whose runs share no question has no Δ."""
    if not runs:
        raise InputError("no runs to trend", field="EXPERIMENT")
    runs = ordered(runs)
    variant = variant or BASELINE
    metrics = _check(runs, variant, metrics)
    rows: list[dict[str, Any]] = []
    prev: pl.DataFrame | None = None
    prev_q: set[str] = set()
    for i, run in enumerate(runs, start=1):
        res, man = run.results, run.results.manifest
        cur = _wide(res, variant, metrics)
        cur_q = set(cur["qid"].to_list())
        steps = _step(prev, cur, res, metrics) if prev is not None else {}
        for m in metrics:
            row: dict[str, Any] = {
                "run": i, "label": run.label, "sweep_id": man.get("sweep_id"),
                "created": man.get("created"), "experiment": man.get("experiment"),
                "fingerprint": (man.get("dataset") or {}).get("fingerprint"), "variant": variant,
                "metric": m, "questions": len(cur_q), **_run_stats(cur, m)}
            if prev is not None:
                row.update(shared=len(prev_q & cur_q), only_previous=len(prev_q - cur_q),
                           only_current=len(cur_q - prev_q), **steps.get(m, {}))
            rows.append(row)
        prev, prev_q = cur, cur_q
    return pl.DataFrame(rows, schema=SCHEMA)
