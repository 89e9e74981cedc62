"""The statistics of answer consistency (ablate.components.metrics.consistency): per
perturbed variant, the consistency rate with a 95% interval that treats the questions of
one cluster as one unit (clustered_interval, consistency_rates), and the reference the
rate is read against, the baseline's run-to-run agreement (reference_of: 1 for a
generator its registration declares `deterministic`, or any at temperature 0).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import polars as pl

from ablate.components.metrics.consistency import COLUMN
from ablate.components.stats.clusters import cluster_se, cluster_sums

LEVEL = 0.95


def _unit(cluster: Any, i: int) -> Any:
    """The resampling unit of question i: its cluster, or itself when it has none."""
    return ("question", i) if cluster is None else cluster


def clustered_interval(values: Sequence[float], clusters: Sequence[Any],
                       level: float = LEVEL) -> tuple[float, float, float]:
    """(effective n, low, high) of a proportion of 0/1 `values` whose questions cluster.

    Clopper–Pearson at the effective sample size n / deff (Korn & Graubard 1998): deff is
    the cluster-robust variance of the mean (clusters as units, G/(G−1) small-sample
    factor) over the binomial one, at least 1. At a rate of 0 or 1 the clusters' variance
    cannot be estimated, so the effective n is the number of clusters (every cluster as
    one answer: the most conservative design effect)."""
    # the beta quantile, without importing scipy.stats (~1 s); imported here, as a run
    # whose stages are all cached never needs it
    from scipy.special import betaincinv
    n = len(values)
    if n == 0:
        return 0.0, math.nan, math.nan
    units = np.array([repr(_unit(c, i)) for i, c in enumerate(clusters)])
    codes = np.unique(units, return_inverse=True)[1].reshape(-1)
    y = np.asarray(values, dtype=np.float64)[:, None]
    S, N = cluster_sums(y, np.ones_like(y, dtype=bool), codes)
    p, se, df = (float(a[0]) for a in cluster_se(S, N))
    g = df + 1
    if p in (0.0, 1.0) or g < 2:
        n_eff = float(g)
    else:
        n_eff = n / max(1.0, se**2 / (p * (1 - p) / n))
    x = p * n_eff
    tail = (1 - level) / 2
    low = 0.0 if x <= 0 else float(betaincinv(x, n_eff - x + 1, tail))
    high = 1.0 if x >= n_eff else float(betaincinv(x + 1, n_eff - x, 1 - tail))
    return n_eff, low, high


def consistency_rates(per_query: pl.DataFrame, baseline: str,
                      cluster_col: str | None = "cluster") -> pl.DataFrame:
    """One row per perturbed variant (the variants with a defined COLUMN, baseline aside):
    n (questions both answered), clusters, changed (answers that differ from the
    baseline's), rate (the consistency rate), ci_low / ci_high (clustered_interval)."""
    schema = {"variant": pl.Utf8, "n": pl.Int64, "clusters": pl.Int64, "changed": pl.Int64,
              "rate": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64}
    if COLUMN not in per_query.columns:
        return pl.DataFrame(schema=schema)
    by = cluster_col if (cluster_col is not None and cluster_col in per_query.columns and
                         per_query[cluster_col].null_count() < per_query.height) else "qid"
    rows = []
    for name in per_query["variant"].unique(maintain_order=True).to_list():
        if name == baseline:
            continue
        part = per_query.filter((pl.col("variant") == name) & pl.col(COLUMN).is_not_nan()
                                & pl.col(COLUMN).is_not_null())
        if not part.height:
            continue
        values = part[COLUMN].to_list()
        clusters = part[by].to_list()
        _, low, high = clustered_interval(values, clusters)
        units = len({_unit(c, i) for i, c in enumerate(clusters)})
        rows.append({"variant": name, "n": part.height, "clusters": units,
                     "changed": sum(v < 1 for v in values), "rate": sum(values) / part.height,
                     "ci_low": low, "ci_high": high})
    return pl.DataFrame(rows, schema=schema)


def reference_of(config: dict[str, Any] | None) -> tuple[float, str]:
    """(the baseline's run-to-run agreement, why): 1 for a deterministic generator (one
    whose registration declares `deterministic=True`, or any decoding greedily at
    temperature 0), NaN (not measured) for a stochastic one, from the baseline's config
    (variants.json). A generator registered `remote=True` may still vary slightly."""
    from ablate.components.contract.config import GeneratorConfig
    from ablate.components.contract.registry import registry
    gen = (config or {}).get("generator") or {}
    name = gen.get("name", GeneratorConfig.model_fields["name"].default)
    temperature = float(gen.get("temperature", 0.0) or 0.0)
    generators = registry("generator")
    info = generators.declaration(name).info if name in generators else {}
    if info.get("deterministic"):
        return 1.0, f"the {name} generator is deterministic"
    if temperature == 0:
        remote = "; a remote endpoint may still vary slightly" if info.get("remote") else ""
        return 1.0, f"{name} decodes greedily (temperature 0{remote})"
    return math.nan, (f"{name} samples at temperature {temperature:g}, so re-running the "
                      "baseline changes some answers too; that rate is not measured")
