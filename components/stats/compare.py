"""Compare every variant with the baseline, per metric, paired on question id.

Builds one matrix D of paired differences (questions x comparisons; 0 where a question
is unused or tied) and runs the test, the correction, the interval and the MDE on the
whole matrix at once, on clusters of questions (ablate.components.stats.inference): the
cluster column names which questions share a document; without one every question is its
own cluster. d_z, wins/ties/losses and the descriptive question-level t are beside them.

A question is used for a (metric, variant) comparison only when both the variant and
the baseline have a finite score; undefined (null/NaN/inf) and missing rows are counted
and reported, and unequal missingness between the two is flagged.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import polars as pl

from ablate.components.contract.errors import InputError
from ablate.components.contract.vocab import CI_METHODS, FAMILIES
from ablate.components.stats.correction import check_method
from ablate.components.stats.inference import infer
from ablate.components.stats.paired_tests import TESTS, abilities
from ablate.components.stats.table_prep import WideTable, prepare_wide
from ablate.components.stats.tails import lower_is_better, worst_tenth
from ablate.components.stats.ttest import effect_size_dz, paired_moments, wilcoxon_pvalues, win_tie_loss

STATS_SCHEMA: dict[str, pl.DataType] = {
    "metric": pl.String(), "variant": pl.String(), "baseline": pl.String(),
    "n_used": pl.Int64(), "n_clusters": pl.Int64(), "n_undefined": pl.Int64(), "mean_variant": pl.Float64(),
    "mean_baseline": pl.Float64(), "delta": pl.Float64(), "ci_low": pl.Float64(),
    "ci_high": pl.Float64(), "ci_level": pl.Float64(), "ci_method": pl.String(),
    "p_value": pl.Float64(),
    "p_ttest": pl.Float64(), "p_adjusted": pl.Float64(), "significant": pl.Boolean(),
    "d_z": pl.Float64(), "wins": pl.Int64(), "ties": pl.Int64(), "losses": pl.Int64(),
    "mde": pl.Float64(), "test": pl.String(), "resamples": pl.Int64(),
    "correction": pl.String(), "family_size": pl.Int64(),
}
STATS_COLUMNS: tuple[str, ...] = tuple(STATS_SCHEMA)
EXTRA_SCHEMA: dict[str, pl.DataType] = {
    "n_missing": pl.Int64(), "n_undefined_variant": pl.Int64(),
    "n_undefined_baseline": pl.Int64(), "missingness_flag": pl.Boolean(),
    "relative_change": pl.Float64(), "t_stat": pl.Float64(), "t_ci_low": pl.Float64(),
    "t_ci_high": pl.Float64(), "p_wilcoxon": pl.Float64(), "p_method": pl.String(),
    "ci_flag": pl.String(), "bootstrap_resamples": pl.Int64(), "alpha": pl.Float64(),
    "seed": pl.Int64(), "family": pl.String(), "clustered_by": pl.String(),
    "n_changed_clusters": pl.Int64(), "p10_variant": pl.Float64(), "p10_baseline": pl.Float64(),
}
OUTPUT_SCHEMA = {**STATS_SCHEMA, **EXTRA_SCHEMA}


def _check(value: str, allowed: Sequence[str], field: str) -> str:
    if value not in allowed:
        raise InputError(f"unknown {field} '{value}' (known: {', '.join(allowed)})",
                         field=field)
    return value


def pair_matrices(w: WideTable, baseline: int, pairs: list[tuple[int, int]]):
    """(D, M, counts): per question and (metric index, variant index) pair, the difference
    variant - baseline (0 where unused or tied within rounding), the used mask (both
    finite), and the missingness counts, means and P10s (ablate.components.stats.tails)
    of each pair, over the same used questions."""
    vi = np.array([v for _, v in pairs], dtype=np.int64)
    mi = np.array([m for m, _ in pairs], dtype=np.int64)
    A = w.values[vi, :, mi].T            # questions x comparisons
    B = w.values[baseline][:, mi]
    pa, pb = w.present[vi].T, w.present[baseline][:, None]
    both = pa & pb
    def_a, def_b = np.isfinite(A), np.isfinite(B)
    M = def_a & def_b
    with np.errstate(invalid="ignore"):
        diff = A - B
        tie = np.abs(diff) <= 1e-12 + 1e-9 * np.maximum(np.abs(A), np.abs(B))
    D = np.where(M & ~tie, diff, 0.0)
    counts = {
        "n_undefined": (both & ~M).sum(axis=0),
        "n_missing": (pa ^ pb).sum(axis=0),
        "n_undefined_variant": (both & ~def_a).sum(axis=0),
        "n_undefined_baseline": (both & ~def_b).sum(axis=0),
    }
    counts["missingness_flag"] = (counts["n_missing"] > 0) | (both & (def_a != def_b)).any(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        n = M.sum(axis=0)
        counts["mean_variant"] = np.where(M, A, 0.0).sum(axis=0) / n
        counts["mean_baseline"] = np.where(M, B, 0.0).sum(axis=0) / n
    lower = np.array([lower_is_better(w.metrics[m]) for m in mi], dtype=bool)
    counts["p10_variant"] = worst_tenth(A, M, lower)
    counts["p10_baseline"] = worst_tenth(np.broadcast_to(B, A.shape), M, lower)
    return D, M, counts


def compare_variants(table: pl.DataFrame, *, baseline: str, metrics: Sequence[str],
                     variant_col: str = "variant", qid_col: str = "qid",
                     test: str = "permutation", correction: str = "holm",
                     alpha: float = 0.05, resamples: int = 10_000,
                     bootstrap_resamples: int = 10_000, ci_method: str = "inversion",
                     seed: int = 0, cluster_col: str | None = None,
                     family: str = "per_metric") -> pl.DataFrame:
    """One row per (metric, variant != baseline), columns OUTPUT_SCHEMA (STATS_COLUMNS
    first), sorted by (metric, variant). See the module docstring."""
    return compare_joint(table, baseline=baseline, metrics=metrics, variant_col=variant_col,
                         qid_col=qid_col, test=test, correction=correction, alpha=alpha,
                         resamples=resamples, bootstrap_resamples=bootstrap_resamples,
                         ci_method=ci_method, seed=seed, cluster_col=cluster_col,
                         family=family)[0]


def compare_joint(table: pl.DataFrame, *, baseline: str, metrics: Sequence[str],
                  variant_col: str = "variant", qid_col: str = "qid",
                  test: str = "permutation", correction: str = "holm",
                  alpha: float = 0.05, resamples: int = 10_000,
                  bootstrap_resamples: int = 10_000, ci_method: str = "inversion",
                  seed: int = 0, cluster_col: str | None = None,
                  family: str = "per_metric", external: Sequence[tuple[str, float]] = (),
                  family_of: Mapping[str, str] | None = None,
                  ) -> tuple[pl.DataFrame, np.ndarray, np.ndarray]:
    """compare_variants, with comparisons tested elsewhere (`external`: (metric, raw p)
    pairs, e.g. the judge-corrected ones) in the same correction: each joins its metric's
    family (`per_metric`) or the one family (`all`). `family_of`: a metric column whose
    comparisons join another metric's family under `per_metric` (a slice's column joins
    its key metric's: ablate.components.stats.slices). Returns (the table, the external
    comparisons' corrected p-values, their family sizes)."""
    _check(test, TESTS.names(), "test")
    _check(ci_method, CI_METHODS, "ci_method")
    _check(family, FAMILIES, "family")
    correction = check_method(correction)
    if not 0.0 < alpha < 1.0:
        raise InputError(f"alpha must be in (0, 1), got {alpha}", field="alpha")
    if resamples < 1 or bootstrap_resamples < 1:
        raise InputError("resamples must be at least 1", field="resamples")
    w = prepare_wide(table, metrics=metrics, variant_col=variant_col, qid_col=qid_col,
                     cluster_col=cluster_col)
    if baseline not in w.variants:
        raise InputError(f"baseline '{baseline}' is not a variant (known: "
                         f"{', '.join(w.variants)})", field="baseline")
    b = w.variants.index(baseline)
    pairs = [(m, v) for m in range(len(w.metrics)) for v in range(len(w.variants)) if v != b]
    if not pairs:
        return pl.DataFrame(schema=OUTPUT_SCHEMA), np.zeros(0), np.zeros(0, dtype=np.int64)
    D, M, cnt = pair_matrices(w, b, pairs)
    keys = {name: i for i, name in enumerate(w.metrics)}
    for name, _ in external:
        keys.setdefault(name, len(keys))
    joins = family_of or {}
    for name in joins.values():
        keys.setdefault(name, len(keys))
    fam_key = np.array([keys[joins.get(w.metrics[m], w.metrics[m])] if family == "per_metric"
                        else 0 for m, _ in pairs], dtype=np.int64)
    extra_fam = np.array([keys[name] if family == "per_metric" else 0 for name, _ in external],
                         dtype=fam_key.dtype)
    r = infer(D, M, w.clusters, fam_key, test=test, correction=correction, alpha=alpha,
              resamples=resamples, bootstrap_resamples=bootstrap_resamples,
              ci_method=ci_method, seed=seed, clustered=cluster_col is not None,
              extra_p=np.array([p for _, p in external], dtype=float), extra_fam=extra_fam)
    _, mean, sd = paired_moments(D, M)
    wins, ties, losses = win_tie_loss(D, M)
    ncomp = len(pairs)
    p_wil = (wilcoxon_pvalues(D, M) if abilities(test).wilcoxon_column
             else np.full(ncomp, np.nan))
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = mean / cnt["mean_baseline"]
    rel[~np.isfinite(rel)] = np.nan
    data = {
        "metric": [w.metrics[m] for m, _ in pairs],
        "variant": [w.variants[v] for _, v in pairs],
        "baseline": [baseline] * ncomp,
        "n_used": r.n, "n_clusters": r.n_clusters, "n_undefined": cnt["n_undefined"],
        "mean_variant": cnt["mean_variant"], "mean_baseline": cnt["mean_baseline"],
        "delta": r.mean, "ci_low": r.ci_low, "ci_high": r.ci_high, "ci_level": r.ci_level,
        "ci_method": r.ci_method, "p_value": r.p_value, "p_ttest": r.p_t,
        "p_adjusted": r.p_adjusted, "significant": r.significant,
        "d_z": effect_size_dz(mean, sd), "wins": wins, "ties": ties, "losses": losses,
        "mde": r.mde, "test": [test] * ncomp, "resamples": r.resamples_used,
        "correction": [correction] * ncomp, "family_size": r.family_size,
        "n_missing": cnt["n_missing"], "n_undefined_variant": cnt["n_undefined_variant"],
        "n_undefined_baseline": cnt["n_undefined_baseline"],
        "missingness_flag": cnt["missingness_flag"], "relative_change": rel,
        "t_stat": r.t_stat, "t_ci_low": r.t_low, "t_ci_high": r.t_high, "p_wilcoxon": p_wil,
        "p_method": r.p_method, "ci_flag": r.ci_flag,
        "bootstrap_resamples": [r.bootstrap_resamples] * ncomp, "alpha": [float(alpha)] * ncomp,
        "seed": [int(seed)] * ncomp, "family": [family] * ncomp,
        "clustered_by": [cluster_col or "none"] * ncomp,
        "n_changed_clusters": r.n_changed_clusters,
        "p10_variant": cnt["p10_variant"], "p10_baseline": cnt["p10_baseline"],
    }
    return (pl.DataFrame([pl.Series(k, data[k], dtype=t) for k, t in OUTPUT_SCHEMA.items()]),
            r.extra_p_adjusted, r.extra_family_size)
