"""The report's Tails table: beside each variant's mean on every key quality metric, its
P10, where the worst tenth of its questions starts (ablate.components.stats.tails: the
nearest-rank rule, oriented by the metric's direction), over the same questions as the
mean (those with a finite score). Descriptive: no test is attached to a P10."""

from __future__ import annotations

import math
from typing import AbstractSet, Sequence

import polars as pl

from ablate.components.metrics.registry import direction
from ablate.components.report.numbers import fmt
from ablate.components.stats.tails import lower_is_better, worst_tenth_of

# metric families that measure what a variant spends, not what it gets right
SPENDING = ("tokens", "cost", "latency", "index")


def quality_metrics(key: Sequence[str]) -> list[str]:
    """The key metrics that measure quality: not tokens, cost, latency or index figures,
    and with a direction (a count such as final/context_tokens has no better or worse)."""
    return [m for m in key if m.split("/", 1)[0] not in SPENDING and direction(m) != "none"]


def mean_and_p10(per_query: pl.DataFrame, variant: str, metric: str) -> tuple[float, float]:
    """(mean, P10) of a variant's finite scores of `metric` (NaN, NaN: none)."""
    col = per_query.filter(pl.col("variant") == variant)[metric].cast(pl.Float64)
    col = col.filter(col.is_finite())
    if not col.len():
        return math.nan, math.nan
    values = col.to_numpy()
    return float(values.mean()), worst_tenth_of(values, lower=lower_is_better(metric))


def tails_section(per_query: pl.DataFrame, key: Sequence[str], order: Sequence[str],
                  hidden: AbstractSet[tuple[str, str]] = frozenset()) -> list[str]:
    """The section's lines: one row per variant of `order` present, mean and P10 of each
    key quality metric with a per-question column; `hidden`: (variant, metric) cells not
    shown (a closed-book variant's retrieval metrics: relevance.unused). Empty when there
    is no such metric."""
    metrics = [m for m in quality_metrics(key) if m in per_query.columns]
    present = set(per_query["variant"].to_list()) if per_query.height else set()
    names = [v for v in order if v in present]
    if not metrics or not names:
        return []
    out = ["## Tails: the worst tenth of questions", "",
           "Each variant's mean beside its **P10**, the score where the worst tenth of its "
           "questions starts: at least a tenth of them score this or worse (the k-th worst "
           "of n, k = ⌈n/10⌉; the highest tenth for a lower-is-better metric), over the "
           "same questions as the mean (those with a defined score). A P10 far below the "
           "mean is a tail the mean hides; a P10 is described, not tested.", "",
           "| variant | " + " | ".join(f"{m} mean | {m} [P10](#glossary)" for m in metrics) + " |",
           "|---|" + "---:|---:|" * len(metrics)]
    for name in names:
        cells = []
        for m in metrics:
            if (name, m) in hidden:
                cells += ["[not used](#glossary)", ""]
                continue
            mean, p10 = mean_and_p10(per_query, name, m)
            cells += [fmt(mean), fmt(p10)]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out + [""]
