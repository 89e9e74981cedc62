"""Judge-corrected comparisons for stats.parquet: every judged metric that has labels (the
experiment's `judge.labels` file, ablate.components.judge.labels) gets, per variant, a
row under the metric name `ppi/<judged metric>` (e.g. `ppi/judge/faithfulness`) with the
prediction-powered corrected means and the corrected paired difference against the
baseline (ablate.components.stats.ppi), on the experiment's clusters.

A label belongs to an answer: a label naming a `variant` labels that variant's answer to
the question; one naming an `answer` labels every variant whose answer (per_query's
`answer` column, the first repeat's) is that text. A variant's own label wins over an
answer label. The corrected difference uses the questions labelled for both the variant's
and the baseline's answers (the rectifier) and every question both judged.

The rows enter the same correction as every other comparison: compare.compare_joint takes
their raw p-values into their family (per metric: the `ppi/` metric's own family; `all`:
the one family), and each interval is the corrected t interval at the level at which the
raw test rejects exactly when the corrected p is at most alpha (1 - alpha * p / p_adj,
as inference.test_level), so `significant` and "the interval excludes 0" agree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import polars as pl

from ablate.components.stats.inference import test_level
from ablate.components.stats.ppi import PPIResult, interval, ppi_mean, ppi_paired

PREFIX = "ppi/"
CI_METHOD = "ppi-t-inversion"
TEST = "ppi-t"
# columns only the corrected rows fill (null elsewhere in stats.parquet)
PPI_SCHEMA: dict[str, pl.DataType] = {
    "raw_metric": pl.String(), "raw_delta": pl.Float64(), "n_labelled": pl.Int64(),
    "clusters_labelled": pl.Int64(), "labels_unused": pl.Int64(), "ppi_lambda": pl.Float64(),
    "ppi_se": pl.Float64(),
    "ppi_reason": pl.String(),
}


@dataclass(frozen=True)
class Corrected:
    """One variant's corrected comparison on one judged metric (before the correction)."""

    metric: str  # the judged metric, e.g. judge/faithfulness
    variant: str
    diff: PPIResult
    mean_variant: float
    mean_baseline: float
    raw_delta: float  # the judge's own mean paired difference
    wins: int
    ties: int
    losses: int

    @property
    def name(self) -> str:
        return PREFIX + self.metric


def label_vectors(rows: pl.DataFrame, labels: pl.DataFrame, metric: str,
                  variant: str) -> np.ndarray:
    """Per row of `rows` (one variant's per_query rows), the label of its answer for
    `metric` (NaN: unlabelled)."""
    mine = labels.filter(pl.col("metric") == metric)
    by_variant = {q: v for q, var, v in zip(mine["qid"], mine["variant"], mine["label"])
                  if var == variant}
    by_answer = {(q, a): v for q, a, v in zip(mine["qid"], mine["answer"], mine["label"])
                 if a is not None}
    answers = rows["answer"].to_list() if "answer" in rows.columns else [None] * rows.height
    out = np.full(rows.height, np.nan)
    for i, (qid, ans) in enumerate(zip(rows["qid"].to_list(), answers)):
        got = by_variant.get(qid, by_answer.get((qid, ans)) if ans is not None else None)
        if got is not None:
            out[i] = float(got)
    return out


def aligned(per_query: pl.DataFrame, baseline: str, variant: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The baseline's and the variant's rows of the questions both ran, in one order."""
    b = per_query.filter(pl.col("variant") == baseline)
    v = per_query.filter(pl.col("variant") == variant)
    common = b.join(v.select("qid"), on="qid", how="semi")["qid"]
    order = pl.DataFrame({"qid": common})
    return (order.join(b, on="qid", how="left", maintain_order="left"),
            order.join(v, on="qid", how="left", maintain_order="left"))


def corrected_comparisons(per_query: pl.DataFrame, labels: pl.DataFrame, *, baseline: str,
                          metrics: Sequence[str], cluster_col: str | None,
                          alpha: float) -> list[Corrected]:
    """Every (judged metric with at least one label, variant != baseline) comparison."""
    out: list[Corrected] = []
    labelled = set(labels["metric"].to_list())
    variants = [v for v in per_query["variant"].unique(maintain_order=True).to_list()
                if v != baseline]
    for metric in (m for m in metrics if m in labelled and m in per_query.columns):
        for variant in variants:
            b, v = aligned(per_query, baseline, variant)
            clusters = b[cluster_col].to_list() if cluster_col else None
            f_b, f_v = (x[metric].cast(pl.Float64).fill_null(math.nan).to_numpy()
                        for x in (b, v))
            y_b, y_v = (label_vectors(b, labels, metric, baseline),
                        label_vectors(v, labels, metric, variant))
            d = f_v - f_b
            finite = d[np.isfinite(d)]
            out.append(Corrected(
                metric, variant, ppi_paired(f_v, f_b, y_v, y_b, clusters, alpha=alpha),
                ppi_mean(f_v, y_v, clusters, alpha=alpha).estimate,
                ppi_mean(f_b, y_b, clusters, alpha=alpha).estimate,
                float(finite.mean()) if finite.size else math.nan,
                int((finite > 0).sum()), int((finite == 0).sum()), int((finite < 0).sum())))
    return out


def corrected_rows(found: Sequence[Corrected], p_adjusted: np.ndarray,
                   family_size: np.ndarray, *, baseline: str, alpha: float,
                   correction: str, family: str, seed: int,
                   cluster_col: str | None) -> pl.DataFrame:
    """The stats.parquet rows of the corrected comparisons, their corrected p-values and
    family sizes given (compare.compare_joint): compare.OUTPUT_SCHEMA plus PPI_SCHEMA."""
    from ablate.components.stats.compare import OUTPUT_SCHEMA
    p = np.array([c.diff.p for c in found], dtype=float)
    level = test_level(p, np.asarray(p_adjusted, dtype=float), alpha)
    rows = []
    for c, p_adj, size, a in zip(found, p_adjusted, family_size, level):
        lo, hi = interval(c.diff, float(a)) if math.isfinite(c.diff.se) else (math.nan, math.nan)
        finite_p = math.isfinite(c.diff.p)
        rows.append({
            "metric": c.name, "variant": c.variant, "baseline": baseline,
            "n_used": c.diff.n_all, "n_clusters": c.diff.clusters_all,
            "n_undefined": c.diff.n_undefined, "mean_variant": c.mean_variant,
            "mean_baseline": c.mean_baseline, "delta": c.diff.estimate, "ci_low": lo,
            "ci_high": hi, "ci_level": 1.0 - float(a), "ci_method": CI_METHOD,
            "p_value": c.diff.p, "p_ttest": c.diff.p, "p_adjusted": float(p_adj),
            "significant": bool(finite_p and float(p_adj) <= alpha),
            "d_z": math.nan, "wins": c.wins, "ties": c.ties, "losses": c.losses,
            "mde": math.nan, "test": TEST, "resamples": 0, "correction": correction,
            "family_size": int(size), "n_missing": 0, "n_undefined_variant": None,
            "n_undefined_baseline": None, "missingness_flag": False,
            "relative_change": math.nan, "t_stat": math.nan, "t_ci_low": math.nan,
            "t_ci_high": math.nan, "p_wilcoxon": math.nan,
            "p_method": TEST if finite_p else "none", "ci_flag": c.diff.reason,
            "bootstrap_resamples": 0, "alpha": alpha, "seed": seed, "family": family,
            "clustered_by": cluster_col or "none",
            "raw_metric": c.metric, "raw_delta": c.raw_delta, "n_labelled": c.diff.n_labelled,
            "clusters_labelled": c.diff.clusters_labelled,
            "labels_unused": c.diff.labels_unused, "ppi_lambda": c.diff.lam,
            "ppi_se": c.diff.se, "ppi_reason": c.diff.reason,
        })
    schema = {**OUTPUT_SCHEMA, **PPI_SCHEMA}
    return pl.DataFrame(rows, schema=schema) if rows else pl.DataFrame(schema=schema)
