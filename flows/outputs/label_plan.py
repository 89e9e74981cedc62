"""`ablate judge plan-labels SWEEP_DIR --labels FILE --half-width H`: how many labelled
questions each judge-corrected paired difference needs for a target CI half-width, from
the sweep (the pilot: its judge scores and the labels it already has), by
ablate.components.stats.ppi_plan.plan_labels on the sweep's clusters, at the level its
interval in the report will have at most: the correction's planning level for the
`ppi/` family (the smallest raw p it can call significant in a family of that size, as
the MDE is planned), so the planned half-width is the corrected interval's."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl

from ablate.components.contract.errors import InputError
from ablate.components.contract.vocab import BASELINE
from ablate.components.judge.labels import read_labels
from ablate.components.report.numbers import fmt
from ablate.components.runtime.sweep_files import SweepFolder
from ablate.components.stats.clusters import cluster_column
from ablate.components.stats.correction import smallest_threshold
from ablate.components.stats.ppi import paired_inputs
from ablate.components.stats.ppi_compare import aligned, label_vectors
from ablate.components.stats.ppi_plan import plan_labels


def plan_lines(sweep_dir: Path, labels_path: Path, half_width: float) -> list[str]:
    """One line per (variant, labelled judged metric): the labels the target needs."""
    if not half_width > 0:
        raise InputError(f"--half-width must be positive, got {half_width}", field="--half-width")
    sweep_dir = Path(sweep_dir)
    for name in ("manifest.json", "per_query.parquet"):
        if not (sweep_dir / name).is_file():
            raise InputError(f"not a sweep folder: {name} is missing", path=str(sweep_dir))
    files = SweepFolder(sweep_dir)
    man = files.manifest
    per_query = files.parquet("per_query.parquet")
    stats = man.get("settings", {}).get("stats", {})
    alpha = float(stats.get("alpha", 0.05))
    family = stats.get("family", "per_metric")
    cluster = cluster_column(stats.get("cluster", "auto"))
    if cluster is not None and cluster not in per_query.columns:
        cluster = None
    labels = read_labels(labels_path)  # labels on questions the pilot did not run are unused
    metrics = [m for m in labels["metric"].unique(maintain_order=True).to_list()
               if m in per_query.columns]
    variants = [v for v in per_query["variant"].unique(maintain_order=True).to_list()
                if v != BASELINE]
    # the ppi/ family: its metric's variants, or every comparison (stats.family: all)
    size = (len(variants) if family == "per_metric"
            else len(variants) * (len(metrics) + len(_tested(sweep_dir))))
    level = smallest_threshold(stats.get("correction", "holm"), max(size, 1), alpha)
    if not metrics:
        raise InputError("no label is for a judged metric this sweep has", path=str(labels_path))
    out = []
    for variant in variants:
        b, v = aligned(per_query, BASELINE, variant)
        for metric in metrics:
            f = [x[metric].cast(pl.Float64).fill_null(math.nan).to_numpy() for x in (v, b)]
            y = [label_vectors(x, labels, metric, name) for x, name in ((v, variant), (b, BASELINE))]
            d_f, d_y = paired_inputs(f[0], f[1], y[0], y[1])
            plan = plan_labels(d_f, d_y, b[cluster].to_list() if cluster else None,
                               half_width=half_width, alpha=level)
            now = int((np.isfinite(d_y) & np.isfinite(d_f)).sum())
            what = (f"~{plan.labels} labelled questions (~{plan.clusters} clusters)"
                    if plan.labels is not None else f"not reachable ({plan.reason})")
            out.append(f"{variant} {metric}: {what} for ±{fmt(half_width)} at "
                       f"{1 - level:.1%} (the {stats.get('correction', 'holm')} planning "
                       f"level of {size} comparisons; now {now} labelled for both answers)")
    return out


def _tested(sweep_dir: Path) -> list[str]:
    """The metrics the sweep's stats.parquet compares (none when it has no stats)."""
    stats = SweepFolder(sweep_dir).optional_parquet("stats.parquet")
    if stats is None:
        return []
    metrics = stats["metric"].unique().to_list()
    return [m for m in metrics if not m.startswith("ppi/")]
