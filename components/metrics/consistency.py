"""Answer consistency of robustness pairs: does a variant that reads a perturbed query
(`query.perturbation`) give the same answer as the baseline, which reads the question as
written, on the same question? Same = exact match after the answer normalisation of the
experiment (SQuAD, or CMRC for Chinese answers: `metrics.answer_normalizer`).

A relative metric: it needs the baseline's answers, so scoring leaves it undefined and it
is filled in after every variant is scored, as the column `robustness/answer_consistency`
(1 for the baseline, where it answered; NaN for variants that are not perturbations).

**No paired test against the baseline.** The baseline's 1 is fixed by definition, so a
paired test of a variant against it has no valid null: its p-value only counts the
changed answers, and any change at all "rejects". The metric is declared `relative`, and
the statistics leave it out (ablate.components.metrics.registry.compared).

**What is reported instead, and against what.** Per perturbed variant, the consistency
rate (its mean over the questions both answered), the answers it changed, and a 95%
interval for the rate that treats questions of one cluster (the per_query `cluster`
column: SQuAD article, else the question itself) as one unit (consistency_rates). The
reference the rate is read against is the baseline's **run-to-run agreement**: how often
re-running the unperturbed baseline gives the same answer, i.e. the rate under the null
"the perturbation changes answers no more often than re-running does". For a
deterministic generator (`extractive`, or a model at temperature 0: greedy decoding) it is
1 exactly, so every changed answer is the perturbation's: the changes are counted, not
sampled, and a test against 1 would say nothing the count does not; the interval says
how far the rate generalises beyond these questions. For a stochastic generator
(temperature > 0) the reference is below 1 and not measured here, so a rate below 1 mixes
the perturbation with sampling noise, and the report says so (reference_of).
"""

from __future__ import annotations

import math
from typing import Any, Collection, Sequence

import numpy as np
import polars as pl
from scipy.special import betaincinv  # the beta quantile, without importing scipy.stats (~1 s)

from ablate.components.metrics.answer import exact_match
from ablate.components.metrics.registry import QuestionView, metric
from ablate.components.stats.clusters import cluster_se, cluster_sums

COLUMN = "robustness/answer_consistency"
LEVEL = 0.95


@metric("answer_consistency", stages=("robustness",), direction="higher",
        needs={"robustness": ("generate",)}, relative=True)
def _declared(view: QuestionView) -> dict[str, float]:
    """Same answer as the unperturbed baseline on this question (normalised exact match;
    filled in after scoring for `query.perturbation` variants): undefined per variant."""
    return {COLUMN: math.nan}


def with_consistency(per_query: pl.DataFrame, baseline: str, perturbed: Collection[str],
                     normalizer: str = "auto") -> pl.DataFrame:
    """`per_query` with COLUMN filled in when some variant is `perturbed` (and answers
    exist); without one, COLUMN (all NaN from scoring) is dropped."""
    if not perturbed or "answer" not in per_query.columns:
        return per_query.drop(COLUMN, strict=False)
    base = {q: a for q, a in per_query.filter(pl.col("variant") == baseline)
            .select("qid", "answer").iter_rows()}
    values = []
    for variant, qid, answer in per_query.select("variant", "qid", "answer").iter_rows():
        ref = base.get(qid)
        if ref is None or answer is None or (variant != baseline and variant not in perturbed):
            values.append(math.nan)
        elif variant == baseline:
            values.append(1.0)
        else:
            values.append(exact_match(answer, [ref], normalizer))
    return per_query.with_columns(pl.Series(COLUMN, values, dtype=pl.Float64))


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
    """(the baseline's run-to-run agreement, why): 1 for a deterministic generator, NaN
    (not measured) for a stochastic one, from the baseline's config (variants.json)."""
    gen = (config or {}).get("generator") or {}
    name, temperature = gen.get("name", "extractive"), float(gen.get("temperature", 0.0) or 0.0)
    if name == "extractive":
        return 1.0, "the extractive generator is deterministic"
    if temperature == 0:
        remote = "; a remote endpoint may still vary slightly" if name == "openai" else ""
        return 1.0, f"{name} decodes greedily (temperature 0{remote})"
    return math.nan, (f"{name} samples at temperature {temperature:g}, so re-running the "
                      "baseline changes some answers too; that rate is not measured")
