"""Compare every variant with the baseline, per metric, paired on question id.

Builds one matrix D of paired differences (questions x comparisons; 0 where a question
is unused or tied), then runs every test on the whole matrix at once: sign-flip p (one
shared sign matrix), paired t, bootstrap CI (one resample matrix per distinct set of
used questions), d_z, wins/ties/losses, MDE, and the multiple-comparison correction.

A question is used for a (metric, variant) comparison only when both the variant and
the baseline have a finite score; undefined (null/NaN/inf) and missing rows are counted
and reported, and unequal missingness between the two is flagged.

When fewer than MIN_UNTIED_FOR_BOOTSTRAP used pairs differ, a bootstrap CI is replaced
by the exact interval that inverts the sign-flip test over the differing pairs (shifts
of their differences not rejected at alpha, times n_differing / n_used), so the interval
excludes 0 only when the sign-flip test rejects: with so few distinct values the
bootstrap distribution is a handful of atoms and BCa can exclude 0 beside p = 0.5.
ci_method is then "exact-signflip" and ci_flag says why; when no shift can be rejected
(about 5 or fewer differing pairs at alpha 0.05) the interval is unbounded and shown as
none (NaN).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import polars as pl

from ablate.components.errors import InputError
from ablate.components.stats.bootstrap import bootstrap_ci
from ablate.components.stats.correction import adjust_pvalues, check_method, resamples_needed
from ablate.components.stats.paired_tests import TESTS
from ablate.components.stats.power import mde
from ablate.components.stats.signflip import shift_interval
from ablate.components.stats.table_prep import WideTable, prepare_wide
from ablate.components.stats.ttest import (
    effect_size_dz,
    paired_moments,
    paired_ttest,
    wilcoxon_pvalues,
    win_tie_loss,
)
from ablate.components.vocab import CI_METHODS, FAMILIES

MC_RESOLUTION = 10.0  # smallest Monte-Carlo p is at most 1/10 of the smallest threshold
MIN_UNTIED_FOR_BOOTSTRAP = 10  # fewer differing pairs: exact sign-flip interval instead
FLAG_FEW_UNTIED = "few_untied_pairs_exact_signflip"
FLAG_FEW_UNTIED_UNBOUNDED = "few_untied_pairs_no_shift_rejected"

STATS_SCHEMA: dict[str, pl.DataType] = {
    "metric": pl.String(), "variant": pl.String(), "baseline": pl.String(),
    "n_used": pl.Int64(), "n_undefined": pl.Int64(), "mean_variant": pl.Float64(),
    "mean_baseline": pl.Float64(), "delta": pl.Float64(), "ci_low": pl.Float64(),
    "ci_high": pl.Float64(), "ci_method": pl.String(), "p_value": pl.Float64(),
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
    "seed": pl.Int64(), "family": pl.String(),
}
OUTPUT_SCHEMA = {**STATS_SCHEMA, **EXTRA_SCHEMA}


def _check(value: str, allowed: Sequence[str], field: str) -> str:
    if value not in allowed:
        raise InputError(f"unknown {field} '{value}' (known: {', '.join(allowed)})",
                         field=field)
    return value


def _pair_matrices(w: WideTable, baseline: int, pairs: list[tuple[int, int]]):
    """Variant/baseline score matrices, used mask, differences, missingness counts."""
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
    return D, M, counts


def exact_when_few_untied(D: np.ndarray, n: np.ndarray, alpha: float, lo: np.ndarray,
                           hi: np.ndarray, ci_used: list[str], ci_flag: list[str]) -> None:
    """Replace (in place) the bootstrap CI of every column with 1..9 differing pairs by
    the exact sign-flip interval (module docstring)."""
    untied = (D != 0).sum(axis=0)
    for j in np.flatnonzero((untied >= 1) & (untied < MIN_UNTIED_FOR_BOOTSTRAP)):
        d = D[:, j][D[:, j] != 0]
        low, high, bounded = shift_interval(d, alpha)
        scale = d.size / n[j]
        lo[j], hi[j] = (low * scale, high * scale) if bounded else (np.nan, np.nan)
        ci_used[j] = "exact-signflip"
        ci_flag[j] = FLAG_FEW_UNTIED if bounded else FLAG_FEW_UNTIED_UNBOUNDED


def compare_variants(table: pl.DataFrame, *, baseline: str, metrics: Sequence[str],
                     variant_col: str = "variant", qid_col: str = "qid",
                     test: str = "permutation", correction: str = "holm",
                     alpha: float = 0.05, resamples: int = 10_000,
                     bootstrap_resamples: int = 10_000, ci_method: str = "bca",
                     seed: int = 0, cluster_col: str | None = None,
                     family: str = "per_metric") -> pl.DataFrame:
    """One row per (metric, variant != baseline), columns OUTPUT_SCHEMA (STATS_COLUMNS
    first), sorted by (metric, variant). See the module docstring."""
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
        return pl.DataFrame(schema=OUTPUT_SCHEMA)
    D, M, cnt = _pair_matrices(w, b, pairs)
    n, mean, sd = paired_moments(D, M)
    t_stat, p_t, t_lo, t_hi = paired_ttest(D, M, alpha)
    wins, ties, losses = win_tie_loss(D, M)
    fam_key = np.array([m if family == "per_metric" else 0 for m, _ in pairs])
    defined = n >= 1
    m_max = max(int((defined & (fam_key == k)).sum()) for k in set(fam_key.tolist()))
    n_mc = max(resamples, resamples_needed(correction, max(m_max, 1), alpha, MC_RESOLUTION))

    ncomp = len(pairs)
    p_wil = wilcoxon_pvalues(D, M) if test == "wilcoxon" else np.full(ncomp, np.nan)
    p_value, p_method, used_resamples = TESTS.get(test)(D, M, resamples=n_mc, seed=seed,
                                                        alpha=alpha)
    p_value[~defined] = np.nan
    p_method = [pm if ok else "none" for pm, ok in zip(p_method, defined)]

    if ci_method == "t":
        lo, hi, ci_used, ci_flag = t_lo, t_hi, ["t"] * ncomp, [""] * ncomp
        boot_b = 0
    else:
        clusters = w.clusters if cluster_col is not None else None
        lo, hi, ci_used, ci_flag = bootstrap_ci(D, M, clusters=clusters, alpha=alpha,
                                                resamples=bootstrap_resamples, seed=seed,
                                                method=ci_method)
        boot_b = bootstrap_resamples
        exact_when_few_untied(D, n, alpha, lo, hi, ci_used, ci_flag)

    p_adj = np.full(ncomp, np.nan)
    fam_size = np.zeros(ncomp, dtype=np.int64)
    for k in sorted(set(fam_key.tolist())):
        idx = np.flatnonzero(fam_key == k)
        p_adj[idx] = adjust_pvalues(p_value[idx], correction)
        fam_size[idx] = int(np.isfinite(p_value[idx]).sum())

    with np.errstate(invalid="ignore", divide="ignore"):
        rel = mean / cnt["mean_baseline"]
    rel[~np.isfinite(rel)] = np.nan
    data = {
        "metric": [w.metrics[m] for m, _ in pairs],
        "variant": [w.variants[v] for _, v in pairs],
        "baseline": [baseline] * ncomp,
        "n_used": n.astype(np.int64), "n_undefined": cnt["n_undefined"],
        "mean_variant": cnt["mean_variant"], "mean_baseline": cnt["mean_baseline"],
        "delta": mean, "ci_low": lo, "ci_high": hi, "ci_method": ci_used,
        "p_value": p_value, "p_ttest": p_t, "p_adjusted": p_adj,
        "significant": np.nan_to_num(p_adj, nan=np.inf) <= alpha,
        "d_z": effect_size_dz(mean, sd), "wins": wins, "ties": ties, "losses": losses,
        "mde": mde(n, sd, alpha), "test": [test] * ncomp, "resamples": used_resamples,
        "correction": [correction] * ncomp, "family_size": fam_size,
        "n_missing": cnt["n_missing"], "n_undefined_variant": cnt["n_undefined_variant"],
        "n_undefined_baseline": cnt["n_undefined_baseline"],
        "missingness_flag": cnt["missingness_flag"], "relative_change": rel,
        "t_stat": t_stat, "t_ci_low": t_lo, "t_ci_high": t_hi, "p_wilcoxon": p_wil,
        "p_method": p_method, "ci_flag": ci_flag,
        "bootstrap_resamples": [boot_b] * ncomp, "alpha": [float(alpha)] * ncomp,
        "seed": [int(seed)] * ncomp, "family": [family] * ncomp,
    }
    return pl.DataFrame([pl.Series(k, data[k], dtype=t) for k, t in OUTPUT_SCHEMA.items()])
