"""worth.parquet: the Shapley value of each factor of a two-level full factorial design
and the Shapley interaction index of each pair, per key metric, with cluster intervals
and family-corrected p-values (the values: ablate.components.stats.worth).

Every question ran in every cell, so each question gives one value of each Shapley value
and interaction index (a fixed weighted sum of its scores in the cells). Per metric,
over the questions with a defined score in every cell (`n`, the others in `n_excluded`):

- `value`: the mean over questions (= the Shapley value of the mean scores);
- `full_minus_empty`: the mean of v(every change) - v(baseline), which the metric's
  Shapley values add up to (efficiency);
- `p_value` / `p_adjusted`: the experiment's paired test on cluster sums of the
  per-question values (by default the two-sided sign-flip test: under the null a
  cluster's summed value is as likely to carry either sign), corrected with the
  experiment's correction over the family of one metric's Shapley values (and,
  separately, of one metric's interaction indices);
- `ci_low` / `ci_high`: at the Bonferroni level 1 - alpha / m, m the family size, so
  that a metric's m intervals hold together with probability at least 1 - alpha
  (`ci_level`): the cluster-robust t interval (G - 1 degrees of freedom) by default, or
  the cluster bootstrap (whole clusters resampled) when `stats.ci_method` is `bca` or
  `percentile`. benchmarks/worth_validity.py measured the cluster bootstrap BCa at 20 to
  40 clusters covering 0.88-0.94 jointly at a nominal 0.95 (too narrow at the far
  quantiles Bonferroni needs), hence the t interval as the default;
- on a 0/1 metric (every score 0 or 1), a column whose per-question values are non-zero in
  fewer than FEW_CHANGED clusters (`n_changed_clusters`, none at all included) has its
  interval widened to hold the Tango score interval at the same level, as stats.parquet's
  0/1 intervals are (ablate.components.stats.binary_bound): a per-question value lies in
  [-B, B] (B = 1 for a Shapley value, 2 for an interaction index), and the bound of the
  value / B as a difference in [-1, 1] accounts for changes not seen, which the t interval
  of a handful of non-zero values cannot (it was [0, 0] where nothing changed, covering
  true values of 0.01-0.024 at n 50 only 0.34-0.70 of the time). `ci_flag` says why:
  `no_question_differs`, `few_changed_clusters`, and `few_documents_iid_tango` where too
  few documents bound a side only as if the questions were independent;
  benchmarks/worth_rare_changes.py measures the coverage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import polars as pl

from ablate.components.contract.errors import InputError
from ablate.components.stats.binary_bound import FLAG_FEW_DOCUMENTS, tango_few_documents
from ablate.components.stats.bootstrap import bootstrap_ci
from ablate.components.stats.clusters import (
    FEW_CHANGED,
    FLAG_FEW_CHANGED,
    changed_clusters,
    cluster_sums,
    cluster_ttest,
)
from ablate.components.stats.correction import check_method
from ablate.components.stats.factorial import Design, design_wide
from ablate.components.stats.inference import infer
from ablate.components.stats.worth import (
    MAX_EXACT_FACTORS,
    factor_pairs,
    full_minus_empty_weights,
    interaction_weights,
    shapley_weights,
)

WORTH_FILE = "worth.parquet"
SHAPLEY, INTERACTION = "shapley", "interaction"
WORTH_SCHEMA: dict[str, pl.DataType] = {
    "factor": pl.String(), "metric": pl.String(), "kind": pl.String(), "level": pl.String(),
    "value": pl.Float64(), "ci_low": pl.Float64(), "ci_high": pl.Float64(),
    "ci_level": pl.Float64(), "ci_method": pl.String(), "p_value": pl.Float64(),
    "p_adjusted": pl.Float64(), "significant": pl.Boolean(), "full_minus_empty": pl.Float64(),
    "n": pl.Int64(), "n_clusters": pl.Int64(), "n_excluded": pl.Int64(),
    "family_size": pl.Int64(), "test": pl.String(), "correction": pl.String(),
    "ci_flag": pl.String(), "n_changed_clusters": pl.Int64(),
}
FLAG_NO_CHANGE = "no_question_differs"


def worth_applies(design: Design | None) -> bool:
    """A worth analysis needs a full design of 2 to MAX_EXACT_FACTORS two-level factors."""
    return (design is not None and design.fraction == "full"
            and 2 <= len(design.names) <= MAX_EXACT_FACTORS
            and all(len(lv) == 2 for lv in design.labels))


@dataclass
class WorthArrays:
    """One metric's columns (k Shapley values, then the pairs' interaction indices)."""

    value: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    ci_level: np.ndarray
    ci_method: list[str]
    p_value: np.ndarray
    p_adjusted: np.ndarray
    family_size: np.ndarray
    n_clusters: np.ndarray
    full_minus_empty: float
    ci_flag: list[str]
    n_changed_clusters: np.ndarray


def worth_contrasts(Y: np.ndarray, cells: Sequence[tuple[int, ...]]) -> tuple[np.ndarray, np.ndarray]:
    """(per-question Shapley and interaction values: questions x (k + pairs), per-question
    full - empty) of the scores Y (questions x cells, every one defined)."""
    W = np.concatenate([shapley_weights(cells), interaction_weights(cells)], axis=1)
    C = Y @ W
    tie = np.abs(C) <= 1e-9 * (np.abs(Y) @ np.abs(W)) + 1e-12  # exact zeros stay ties
    return np.where(tie, 0.0, C), Y @ full_minus_empty_weights(cells)


def worth_inference(Y: np.ndarray, cells: Sequence[tuple[int, ...]], codes: np.ndarray, *,
                    clustered: bool, test: str = "permutation", correction: str = "holm",
                    alpha: float = 0.05, resamples: int = 10_000,
                    bootstrap_resamples: int = 10_000, ci_method: str = "t",
                    seed: int = 0, widen_binary: bool = True) -> WorthArrays:
    """The module docstring's numbers for one metric. Y: questions x cells (complete
    questions only), codes: one cluster code per question; `ci_method`: `t` (cluster-robust
    t), `bca` or `percentile` (cluster bootstrap); `widen_binary` False: no 0/1 widening
    (benchmarks only: the intervals before issue 56)."""
    k = len(cells[0])
    C, fme = worth_contrasts(Y, cells)
    W = np.concatenate([shapley_weights(cells), interaction_weights(cells)], axis=1)
    M = np.ones_like(C, dtype=bool)
    fam = np.array([0] * k + [1] * (C.shape[1] - k))
    r = infer(C, M, codes, fam, test=test, correction=correction, alpha=alpha,
              resamples=resamples, bootstrap_resamples=0, ci_method="t", seed=seed,
              clustered=clustered)
    method = ci_method if ci_method in ("bca", "percentile") else "t"
    lo, hi = np.full(C.shape[1], np.nan), np.full(C.shape[1], np.nan)
    used: list[str] = [method] * C.shape[1]
    level = np.zeros(C.shape[1])
    units = codes if clustered else np.arange(C.shape[0], dtype=np.int64)
    for f in (0, 1):
        cols = np.flatnonzero(fam == f)
        if cols.size == 0:
            continue
        a = alpha / cols.size
        if method == "t":
            S, N = cluster_sums(C[:, cols], M[:, cols], units)
            _, _, lo[cols], hi[cols] = cluster_ttest(S, N, a)
            u = ["t"] * cols.size
        else:
            lo[cols], hi[cols], u, _ = bootstrap_ci(C[:, cols], M[:, cols],
                                                    clusters=codes if clustered else None,
                                                    alpha=a, resamples=bootstrap_resamples,
                                                    seed=seed, method=method)
        for i, j in enumerate(cols):
            used[j] = f"cluster-{u[i]}-bonferroni" if clustered else f"{u[i]}-bonferroni"
        level[cols] = 1.0 - a
    # a column with no spread (every question the same value) has the point interval
    flat = np.ptp(C, axis=0) == 0
    lo[flat], hi[flat] = r.mean[flat], r.mean[flat]
    changed = changed_clusters(C, M, units)
    flags = [""] * C.shape[1]
    if widen_binary and Y.size and bool(np.isin(Y, (0.0, 1.0)).all()):
        bound = np.maximum(np.clip(W, 0, None).sum(axis=0), np.clip(-W, 0, None).sum(axis=0))
        lo, hi, used, flags = _widen_binary(C / bound, M, units, lo, hi, level, bound, changed,
                                            used)
    return WorthArrays(r.mean, lo, hi, level, used, r.p_value, r.p_adjusted, r.family_size,
                       r.n_clusters, float(fme.mean()) if fme.size else float("nan"),
                       flags, changed)


def _widen_binary(X: np.ndarray, M: np.ndarray, units: np.ndarray, lo: np.ndarray,
                  hi: np.ndarray, level: np.ndarray, bound: np.ndarray, changed: np.ndarray,
                  used: list[str]) -> tuple[np.ndarray, np.ndarray, list[str], list[str]]:
    """The module docstring's 0/1 widening of the columns with fewer than FEW_CHANGED
    changed clusters; X: the per-question values over their bound B (in [-1, 1])."""
    lo, hi, used = lo.copy(), hi.copy(), list(used)
    flags = [""] * X.shape[1]
    cols = np.flatnonzero(changed < FEW_CHANGED)
    if cols.size == 0:
        return lo, hi, used, flags
    S, N = cluster_sums(X[:, cols], M[:, cols], units)
    t_lo, t_hi, few = tango_few_documents(X[:, cols], M[:, cols], S, N, 1.0 - level[cols])
    lo[cols] = np.fmin(lo[cols], bound[cols] * t_lo)
    hi[cols] = np.fmax(hi[cols], bound[cols] * t_hi)
    for i, j in enumerate(cols):
        used[j] += "+tango"
        why = FLAG_NO_CHANGE if changed[j] == 0 else FLAG_FEW_CHANGED
        flags[j] = "; ".join([why] + ([FLAG_FEW_DOCUMENTS] if few[i] else []))
    return lo, hi, used, flags


def worth_effects(table: pl.DataFrame, design: Design, *, metrics: Sequence[str],
                  test: str = "permutation", correction: str = "holm", alpha: float = 0.05,
                  resamples: int = 10_000, bootstrap_resamples: int = 10_000,
                  ci_method: str = "t", seed: int = 0,
                  cluster_col: str | None = None) -> pl.DataFrame:
    """One row per (metric, factor) then (metric, pair), columns WORTH_SCHEMA."""
    if not worth_applies(design):
        raise InputError("a worth analysis needs a full factorial design of 2 to "
                         f"{MAX_EXACT_FACTORS} two-level factors", field="design")
    correction = check_method(correction)
    names, w, order = design_wide(table, design, metrics, cluster_col)
    cells = [design.cells[n] for n in names]
    k = len(design.names)
    pairs = factor_pairs(k)
    labels = list(design.names) + [f"{design.names[i]} × {design.names[j]}" for i, j in pairs]
    levels = [design.labels[i][1] for i in range(k)] + \
        [f"{design.labels[i][1]} × {design.labels[j][1]}" for i, j in pairs]
    kinds = [SHAPLEY] * k + [INTERACTION] * len(pairs)
    frames = []
    for mi, metric in enumerate(w.metrics):
        Y = w.values[order, :, mi].T
        anywhere = w.present[order].any(axis=0)
        complete = np.isfinite(Y).all(axis=1)
        if not complete.any():
            continue
        r = worth_inference(Y[complete], cells, w.clusters[complete],
                            clustered=cluster_col is not None, test=test,
                            correction=correction, alpha=alpha, resamples=resamples,
                            bootstrap_resamples=bootstrap_resamples, ci_method=ci_method,
                            seed=seed)
        ncol = len(labels)
        p_adj = np.nan_to_num(r.p_adjusted, nan=np.inf)
        data = {"factor": labels, "metric": [metric] * ncol, "kind": kinds, "level": levels,
                "value": r.value, "ci_low": r.ci_low, "ci_high": r.ci_high,
                "ci_level": r.ci_level, "ci_method": r.ci_method, "p_value": r.p_value,
                "p_adjusted": r.p_adjusted, "significant": p_adj <= alpha,
                "full_minus_empty": [r.full_minus_empty] * ncol,
                "n": [int(complete.sum())] * ncol, "n_clusters": r.n_clusters,
                "n_excluded": [int((anywhere & ~complete).sum())] * ncol,
                "family_size": r.family_size, "test": [test] * ncol,
                "correction": [correction] * ncol, "ci_flag": r.ci_flag,
                "n_changed_clusters": r.n_changed_clusters}
        frames.append(pl.DataFrame([pl.Series(c, data[c], dtype=t)
                                    for c, t in WORTH_SCHEMA.items()]))
    return pl.concat(frames) if frames else pl.DataFrame(schema=WORTH_SCHEMA)


def worth_run_metrics(worth: pl.DataFrame | None) -> dict[str, float]:
    """The parent run's metrics: `worth/<factor>/<metric>` and its `/ci_low`, `/ci_high`
    per Shapley value; a pair's interaction index as `worth/<a>:<b>/<metric>` (MLflow
    metric names allow letters, digits, _ - . : / and spaces)."""
    out: dict[str, float] = {}
    if worth is None:
        return out
    for r in worth.iter_rows(named=True):
        factor = r["factor"].replace(" × ", ":")
        base = f"worth/{factor}/{r['metric']}"
        out[base] = r["value"]
        out[f"{base}/ci_low"] = r["ci_low"]
        out[f"{base}/ci_high"] = r["ci_high"]
    return out
