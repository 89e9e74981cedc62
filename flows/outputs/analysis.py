"""The statistics of a finished sweep, from its per-question table: every comparison with
the baseline (with the judge-corrected ppi/ rows in the same correction; report.slices'
per-slice tests in families of their own), a factorial design's effects, a sequential run's decisions, and the
commands that make them again from the saved outputs. flows/outputs/write.py writes what
these return; nothing here writes a file."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import polars as pl

from ablate.components.contract.vocab import BASELINE
from ablate.components.metrics.registry import compared
from ablate.components.stats.clusters import cluster_column
from ablate.components.stats.compare import compare_joint
from ablate.components.stats.factorial import design_from_records, factorial_effects
from ablate.components.stats.ppi_compare import corrected_comparisons, corrected_rows
from ablate.components.stats.slices import joined as joined_slices
from ablate.components.stats.slices import slice_comparisons, sliced_inputs
from ablate.components.stats.slices import take as take_slices
from ablate.flows.outputs.manifest import design_record
from ablate.flows.run.context import RunContext
from ablate.flows.run.sequential import apply_decisions


def tested(per_query: pl.DataFrame, cluster: str) -> tuple[list[str], str | None]:
    """(the metric columns the statistics test: not a relative metric's, such as answer
    consistency, which has no paired null; the cluster column or None: cluster_column)."""
    metrics = [c for c in per_query.columns if "/" in c and compared(c)]
    return metrics, cluster_column(cluster)


def compute_stats(ctx: RunContext, per_query: pl.DataFrame) -> pl.DataFrame:
    """Every comparison with the baseline; with `judge.labels`, the judge-corrected ones
    (`ppi/<metric>` rows, ablate.components.stats.ppi_compare) in the same correction."""
    s = ctx.spec.stats
    metrics, cluster = tested(per_query, s.cluster)
    found = ([] if ctx.labels is None else corrected_comparisons(
        per_query, ctx.labels, baseline=BASELINE, metrics=metrics, cluster_col=cluster,
        alpha=s.alpha))
    kw = dict(test=s.test, correction=s.correction, alpha=s.alpha, resamples=s.resamples,
              bootstrap_resamples=s.bootstrap_resamples, ci_method=s.ci_method,
              seed=ctx.spec.seed, cluster_col=cluster)
    stats, p_adj, size = compare_joint(
        per_query, baseline=BASELINE, metrics=metrics, family=s.family,
        external=[(c.name, c.diff.p) for c in found], **kw)  # type: ignore[arg-type]
    # report.slices: a view, tested in families of its own (never the main ones)
    table, cols, untested = sliced_inputs(
        per_query, slices=ctx.spec.report.slices, key=ctx.spec.metrics.key, tested=metrics,
        baseline=BASELINE, alpha=s.alpha, cluster_col=cluster)
    sliced = slice_comparisons(table, cols, baseline=BASELINE, family=s.family, **kw)
    stats = joined_slices(pl.concat([stats, sliced], how="diagonal_relaxed"), cols,
                          untested)  # slices.parquet's rows: _statistics
    if not found:
        return stats
    rows = corrected_rows(found, p_adj, size, baseline=BASELINE, alpha=s.alpha,
                          correction=s.correction, family=s.family, seed=ctx.spec.seed,
                          cluster_col=cluster)
    return pl.concat([stats, rows], how="diagonal_relaxed").sort("metric", "variant")


def compute_factorial(ctx: RunContext, per_query: pl.DataFrame,
                      records: list[dict[str, Any]]) -> pl.DataFrame | None:
    """factorial.parquet: the design's effects per metric (ablate.components.stats.factorial),
    with the experiment's test, correction and resampling settings; None without a design."""
    design = design_from_records(design_record(ctx), records)
    if design is None:
        return None
    s = ctx.spec.stats
    metrics, cluster = tested(per_query, s.cluster)
    return factorial_effects(per_query, design, metrics=metrics, test=s.test,
                             correction=s.correction, alpha=s.alpha, resamples=s.resamples,
                             bootstrap_resamples=s.bootstrap_resamples, ci_method=s.ci_method,
                             seed=ctx.spec.seed, cluster_col=cluster, family=s.family)


def rerun_hint(ctx: RunContext) -> str:
    """How to run the analysis again: every stage is reused from the cache."""
    return (f"ablate run {shlex.quote(str(ctx.loaded.path))} with the same options "
            "(every stage is reused)")


def stats_hint(ctx: RunContext, folder: Path, per_query: pl.DataFrame) -> str:
    """The commands that make stats.parquet from per_query.parquet with the experiment's
    statistics settings (`ablate stats`; not a sequential run's decisions nor a design's
    factorial effects), then the report (`ablate report`)."""
    s = ctx.spec.stats
    metrics, cluster = tested(per_query, s.cluster)
    args = ["ablate", "stats", str(folder / "per_query.parquet"), "--baseline", BASELINE,
            "--metrics", ",".join(metrics), "--test", s.test, "--correction", s.correction,
            "--alpha", str(s.alpha), "--resamples", str(s.resamples),
            "--bootstrap-resamples", str(s.bootstrap_resamples), "--ci-method", s.ci_method,
            "--family", s.family, "--seed", str(ctx.spec.seed),
            "--cluster-column", cluster or "none",
            "--out", str(folder / "stats.parquet")]
    hint = f"{shlex.join(args)}, then {shlex.join(['ablate', 'report', str(folder)])}"
    if ctx.labels is not None:  # ablate stats knows nothing of judge.labels
        hint += f" (without the judge-corrected ppi/ rows: for those, {rerun_hint(ctx)})"
    if ctx.spec.report.slices:  # nor of report.slices
        hint += f" (without report.slices: slices.parquet comes from {rerun_hint(ctx)})"
    return hint


def statistics(ctx: RunContext, per_query: pl.DataFrame, variants: list[dict[str, Any]],
                sequential: dict[str, Any] | None
                ) -> tuple[pl.DataFrame, pl.DataFrame | None, pl.DataFrame | None]:
    """(stats, factorial effects or None, slice comparisons or None); a sequential run's
    key decisions are the looks'."""
    stats, sliced = take_slices(compute_stats(ctx, per_query))
    factorial = compute_factorial(ctx, per_query, variants)
    if sequential is not None:
        stats = apply_decisions(stats, sequential)
    return stats, factorial, sliced
