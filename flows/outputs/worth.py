"""worth.parquet of a sweep: the Shapley values and interaction indices of its factorial
design's factors per key metric (ablate.components.stats.worth_table), when the design is
a full one of two-level factors; written by flows/outputs/write.py beside factorial.parquet."""

from __future__ import annotations

from typing import Any

import polars as pl

from ablate.components.report.sweep_data import present_key
from ablate.components.stats.clusters import cluster_column
from ablate.components.stats.factorial import design_from_records
from ablate.components.stats.worth_table import worth_applies, worth_effects
from ablate.flows.outputs.manifest import design_record
from ablate.flows.run.context import RunContext


def worth_expected(ctx: RunContext) -> bool:
    """Whether the experiment's design gets a worth analysis (a full design of two-level
    variables)."""
    d = ctx.spec.design
    return d is not None and d.fraction == "full" and all(len(v) == 2 for v in d.variables.values())


def compute_worth(ctx: RunContext, per_query: pl.DataFrame,
                  records: list[dict[str, Any]], metrics: list[str]) -> pl.DataFrame | None:
    """The worth rows of the key metrics among `metrics` (the tested ones), with the
    experiment's test, correction, alpha, resampling and seed; None without a design of
    two-level factors."""
    design = design_from_records(design_record(ctx), records)
    if not worth_applies(design):
        return None
    assert design is not None
    s = ctx.spec.stats
    key = present_key(ctx.spec.metrics.key, metrics)
    return worth_effects(per_query, design, metrics=key, test=s.test, correction=s.correction,
                         alpha=s.alpha, resamples=s.resamples,
                         bootstrap_resamples=s.bootstrap_resamples, ci_method=s.ci_method,
                         seed=ctx.spec.seed, cluster_col=cluster_column(s.cluster))
