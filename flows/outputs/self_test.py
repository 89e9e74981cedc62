"""The manifest's `self_test` (ablate.components.stats.self_test): the sweep's tests and
intervals run on nulls made from its own key comparisons, with its own settings."""

from __future__ import annotations

from typing import Any

import polars as pl

from ablate.components.contract.errors import cause
from ablate.components.contract.vocab import BASELINE
from ablate.components.report.sweep_data import DEFAULT_KEY, present_key
from ablate.components.stats.self_test import self_test
from ablate.flows.run.context import RunContext


def self_test_record(ctx: RunContext, per_query: pl.DataFrame,
                     tested: tuple[list[str], str | None]) -> dict[str, Any]:
    """The record, or {"error": ...} when it could not run (the sweep's outputs never
    depend on it). `tested`: the metrics the statistics compare and the cluster column."""
    s = ctx.spec.stats
    metrics, cluster = tested
    key = [m for m in present_key(ctx.spec.metrics.key or DEFAULT_KEY, metrics) if m in metrics]
    try:
        return self_test(per_query, baseline=BASELINE, metrics=key or metrics, test=s.test,
                         ci_method=s.ci_method, alpha=s.alpha,
                         bootstrap_resamples=s.bootstrap_resamples, seed=ctx.spec.seed,
                         cluster_col=cluster)
    except Exception as exc:  # noqa: BLE001 - a diagnostic: one line in the manifest
        return {"error": cause(exc)}
