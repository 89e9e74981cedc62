"""A sample-size plan from a pilot sweep: per variant x metric, the pilot's paired
differences and their clusters give the needed n, in clusters of questions
(ablate.components.stats.sample_size), and the pilot's per-question stage times
(timings.parquet) give what running that n costs.

The n counts questions whose metric is defined for both variants (a retrieval metric is
undefined on a question without evidence): the pilot's share of such questions turns it
into the questions to run (`PlanRow.to_run`), which the cost counts, and `defined_share`
gives how many questions of the data set have the metric.

The cluster column is resolved as `ablate stats` does (`auto`: the `cluster` column when
the table has one; `none`: independent questions; else a column name) and checked as the
statistics check it (ablate.components.stats.table_prep): every question has one
non-empty cluster, and not all questions are in one."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import polars as pl

from ablate.components.stats.clusters import cluster_column
from ablate.components.stats.sample_size import SampleSize, planning_alpha, sample_size
from ablate.components.stats.table_prep import checked_cluster_codes, paired_differences, question_codes

LATENCY = "latency/"


@dataclass(frozen=True)
class PlanRow:
    metric: str
    variant: str
    size: SampleSize
    family_size: int
    seconds_per_question: float  # the variant's summed mean stage seconds (NaN: no timings)
    pairs: int = 0  # pilot questions paired with the baseline, the metric defined or not

    @property
    def to_run(self) -> int | None:
        """Questions to run for the needed n with the metric defined, at the pilot's share
        of such questions (n when every paired pilot question has it)."""
        n, used = self.size.n, self.size.n_pilot
        if not n:
            return None
        return math.ceil(n * self.pairs / used - 1e-9) if used and self.pairs > used else n

    @property
    def cost(self) -> float:
        """Stage seconds for the questions to run (NaN when n or the timings are missing)."""
        run = self.to_run
        return self.seconds_per_question * run if run else float("nan")


def metric_columns(per_query: pl.DataFrame) -> list[str]:
    """The per-question metric columns a sweep compares (ablate.flows.outputs.analysis.tested:
    not a relative metric's, such as answer consistency)."""
    from ablate.components.metrics.registry import compared
    return [c for c in per_query.columns if "/" in c and compared(c)]


def checked_cluster_column(per_query: pl.DataFrame, choice: str) -> str | None:
    """The column naming each question's cluster for `choice` (clusters.cluster_column:
    `auto`, `none` or a column name), checked as the statistics check it; None: every
    question its own cluster."""
    column = cluster_column(choice, per_query.columns)
    if column is not None:
        qcodes = question_codes(per_query["qid"])
        checked_cluster_codes(per_query, column, qcodes, int(qcodes.max()) + 1 if qcodes.size else 0,
                              off="--cluster-column none", field="--cluster-column")
    return column


def seconds_per_question(timings: pl.DataFrame | None) -> dict[str, float]:
    """Variant -> sum over its latency/* columns of the mean seconds per question: what
    computing its stages costs, whether the pilot computed them or reused them (work
    served from a cache counts the seconds recorded when it was computed; the reused/*
    columns beside them only mark that)."""
    if timings is None or not timings.height:
        return {}
    cols = [c for c in timings.columns if c.startswith(LATENCY)]
    if not cols:
        return {}
    means = timings.group_by("variant").agg([pl.col(c).fill_nan(None).mean() for c in cols])
    return {r["variant"]: float(sum(r[c] for c in cols if r[c] is not None))
            for r in means.iter_rows(named=True)}


def plan(per_query: pl.DataFrame, timings: pl.DataFrame | None, *, baseline: str,
         metrics: Sequence[str], mde: float, alpha: float, power: float, correction: str,
         family: str, cluster_col: str | None = None) -> list[PlanRow]:
    """One PlanRow per metric x variant (other than the baseline), in that order. The
    family size is the sweep's: the variants compared on one metric (`per_metric`), or
    every variant x metric column (`all`). `cluster_col` (checked: checked_cluster_column) names
    each question's cluster; None: independent questions."""
    variants = [v for v in per_query["variant"].unique(maintain_order=True).to_list()
                if v != baseline]
    m = len(variants) * (len(metric_columns(per_query)) if family == "all" else 1)
    a = planning_alpha(alpha, correction, m)
    secs = seconds_per_question(timings)

    def row(variant: str, metric: str) -> PlanRow:
        d, labels = paired_differences(per_query, baseline, variant, metric, cluster_col)
        return PlanRow(metric, variant, sample_size(d, mde, alpha=a, power=power, clusters=labels),
                       m, secs.get(variant, float("nan")), int(d.size))
    return [row(v, metric) for metric in metrics for v in variants]


def defined_share(per_query: pl.DataFrame, baseline: str, metric: str) -> tuple[int, int]:
    """(the baseline's pilot questions with `metric` defined, its pilot questions)."""
    values = per_query.filter(pl.col("variant") == baseline)[metric].cast(pl.Float64)
    return int(values.fill_nan(None).drop_nulls().len()), int(values.len())


def total_seconds(rows: Sequence[PlanRow], timings: pl.DataFrame | None,
                  variants: Sequence[dict[str, Any]], baseline: str) -> tuple[float, int]:
    """(stage seconds, baseline n) to run every planned comparison at its needed n: each
    variant at the largest number of questions to run of its rows (PlanRow.to_run), the baseline at the largest n of all (it is
    compared on every variant's questions), and a stage two variants share (the same stage
    key in variants.json) counted once, at the larger n. (0.0, 0) when no n is defined."""
    need: dict[str, int] = {}
    for r in rows:
        if r.to_run:
            need[r.variant] = max(need.get(r.variant, 0), r.to_run)
    if not need or timings is None or not timings.height:
        return 0.0, max(need.values(), default=0)
    need[baseline] = max(need.values())
    keys = {v.get("name"): {k.replace(":", "_"): key for k, key in
                            (v.get("stage_keys") or {}).items()} for v in variants}
    cols = [c for c in timings.columns if c.startswith(LATENCY)]
    means = timings.filter(pl.col("variant").is_in(list(need))).group_by("variant").agg(
        [pl.col(c).fill_nan(None).mean() for c in cols])
    stages: dict[Any, tuple[float, int]] = {}  # stage identity -> (s/question, n)
    for row in means.iter_rows(named=True):
        v = row["variant"]
        for c in cols:
            if row[c] is None:
                continue
            stage = c[len(LATENCY):]
            key = keys.get(v, {}).get(stage)
            ident = (stage, key) if key else (v, stage)
            s, n = stages.get(ident, (row[c], 0))
            stages[ident] = (s, max(n, need[v]))
    return float(sum(s * n for s, n in stages.values())), need[baseline]
