"""Factorial analysis: main effects and two-way interactions, per question, tested like
the comparisons with the baseline.

Every question ran in every cell of the design, so each question gives one value of
each effect's contrast: the sum over cells of the effect's weight times the question's
score there (weights in ablate.components.stats.design). Per metric and effect:

- `estimate`: the mean contrast over the questions with a defined score in every cell
  (`n`; the others are counted in `n_excluded`, e.g. unanswerable questions for
  retrieval metrics);
- `p_value`, `ci_low`, `ci_high`, `p_adjusted`, `significant`: as for the comparisons
  with the baseline (ablate.components.stats.inference, on clusters when the data gives
  them): by default the two-sided sign-flip test of the contrast values (under the null
  each cluster's summed contrast is as likely to carry either sign; exact when possible)
  and its inverted interval, corrected over the family, all effects of one metric
  (`per_metric`) or every effect of every metric (`all`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import polars as pl

from ablate.components.contract.errors import InputError
from ablate.components.stats.correction import check_method
from ablate.components.stats.design import Effect, alias_label, contrast_weights, design_effects, effect_label
from ablate.components.stats.inference import infer
from ablate.components.stats.table_prep import prepare_wide

FACTORIAL_SCHEMA: dict[str, pl.DataType] = {
    "effect": pl.String(), "kind": pl.String(), "factor_a": pl.String(), "level_a": pl.String(),
    "factor_b": pl.String(), "level_b": pl.String(), "aliases": pl.String(), "metric": pl.String(),
    "estimate": pl.Float64(), "ci_low": pl.Float64(), "ci_high": pl.Float64(),
    "ci_level": pl.Float64(), "ci_method": pl.String(), "p_value": pl.Float64(), "p_adjusted": pl.Float64(),
    "significant": pl.Boolean(), "n": pl.Int64(), "n_clusters": pl.Int64(), "n_excluded": pl.Int64(),
    "p_method": pl.String(),
    "test": pl.String(), "correction": pl.String(), "family_size": pl.Int64(),
}


@dataclass(frozen=True)
class Design:
    """A factorial design as run: factor names (pipeline fields) in design order, their
    level labels (the baseline's first), the fraction, and each cell's variant name with
    its level indexes."""

    names: tuple[str, ...]
    labels: tuple[tuple[str, ...], ...]
    fraction: str
    cells: dict[str, tuple[int, ...]]

    def effects(self) -> list[Effect]:
        return design_effects([len(lv) for lv in self.labels], self.fraction)


def design_from_records(design: dict | None, variants: Sequence[dict]) -> Design | None:
    """The Design of a sweep folder: manifest `design` ({fraction, variables: {name:
    [labels]}}) and the `factors` ({name: label}) of variants.json; None without one."""
    if not design:
        return None
    names = tuple(design["variables"])
    labels = tuple(tuple(design["variables"][n]) for n in names)
    cells = {v["name"]: tuple(labels[i].index(v["factors"][n]) for i, n in enumerate(names))
             for v in variants if v.get("factors")}
    return Design(names, labels, design.get("fraction", "full"), cells)


def design_wide(table: pl.DataFrame, design: Design, metrics: Sequence[str],
                cluster_col: str | None = None):
    """(cell names, the WideTable of the design's cells, each cell's variant index in it);
    a cell without rows in the table is a one-line error."""
    names = list(design.cells)
    missing = [n for n in names if n not in set(table["variant"].cast(pl.String).to_list())]
    if missing:
        raise InputError(f"the per-question table has no rows of the design's cell "
                         f"'{missing[0]}'", field="variant")
    w = prepare_wide(table.filter(pl.col("variant").is_in(names)), metrics=metrics,
                     cluster_col=cluster_col)
    return names, w, [w.variants.index(n) for n in names]


def contrast_matrix(table: pl.DataFrame, design: Design, metrics: Sequence[str],
                    cluster_col: str | None = None):
    """(D, M, excluded, clusters, rows): per-question contrasts (questions x (metric,
    effect) columns, 0 where unused or exactly 0), the used mask, questions left out per
    column, cluster codes, and the (metric, effect) of each column."""
    names, w, order = design_wide(table, design, metrics, cluster_col)
    effects = design.effects()
    W = np.stack([contrast_weights([design.cells[n] for n in names], e) for e in effects], axis=1)
    cols_d, cols_m, excluded, rows = [], [], [], []
    for mi, metric in enumerate(w.metrics):
        Y = w.values[order, :, mi].T                       # questions x cells
        anywhere = w.present[order].any(axis=0)
        complete = np.isfinite(Y).all(axis=1)
        Yz = np.where(complete[:, None], Y, 0.0)
        C = Yz @ W
        scale = np.abs(Yz) @ np.abs(W)
        tie = np.abs(C) <= 1e-9 * scale + 1e-12
        cols_d.append(np.where(complete[:, None] & ~tie, C, 0.0))
        cols_m.append(np.repeat(complete[:, None], len(effects), axis=1))
        excluded += [int((anywhere & ~complete).sum())] * len(effects)
        rows += [(metric, e) for e in effects]
    return (np.concatenate(cols_d, axis=1), np.concatenate(cols_m, axis=1),
            np.array(excluded, dtype=np.int64), w.clusters, rows)


def factorial_effects(table: pl.DataFrame, design: Design, *, metrics: Sequence[str],
                      test: str = "permutation", correction: str = "holm", alpha: float = 0.05,
                      resamples: int = 10_000, bootstrap_resamples: int = 10_000,
                      ci_method: str = "inversion", seed: int = 0, cluster_col: str | None = None,
                      family: str = "per_metric") -> pl.DataFrame:
    """One row per (metric, effect), columns FACTORIAL_SCHEMA, in metric order then the
    design's effect order (main effects first). See the module docstring."""
    correction = check_method(correction)
    D, M, excluded, clusters, rows = contrast_matrix(table, design, metrics, cluster_col)
    ncol = len(rows)
    if ncol == 0:
        return pl.DataFrame(schema=FACTORIAL_SCHEMA)
    metric_names = [m for m, _ in rows]
    fam_key = np.array([metric_names.index(m) if family == "per_metric" else 0
                        for m in metric_names])
    r = infer(D, M, clusters, fam_key, test=test, correction=correction, alpha=alpha,
              resamples=resamples, bootstrap_resamples=bootstrap_resamples,
              ci_method=ci_method, seed=seed, clustered=cluster_col is not None)
    effects = [e for _, e in rows]
    names, labels = design.names, design.labels

    def part(e: Effect, i: int, what: str) -> str | None:
        if i >= len(e.factors):
            return None
        f = e.factors[i]
        return names[f] if what == "factor" else labels[f][e.levels[i]]
    data = {
        "effect": [effect_label(e, names, labels) for e in effects],
        "kind": [e.kind for e in effects],
        "factor_a": [part(e, 0, "factor") for e in effects],
        "level_a": [part(e, 0, "level") for e in effects],
        "factor_b": [part(e, 1, "factor") for e in effects],
        "level_b": [part(e, 1, "level") for e in effects],
        "aliases": [alias_label(e, names) for e in effects],
        "metric": metric_names, "estimate": r.mean, "ci_low": r.ci_low, "ci_high": r.ci_high,
        "ci_level": r.ci_level, "ci_method": r.ci_method, "p_value": r.p_value,
        "p_adjusted": r.p_adjusted, "significant": r.significant,
        "n": r.n, "n_clusters": r.n_clusters, "n_excluded": excluded, "p_method": r.p_method,
        "test": [test] * ncol, "correction": [correction] * ncol, "family_size": r.family_size,
    }
    return pl.DataFrame([pl.Series(k, data[k], dtype=t) for k, t in FACTORIAL_SCHEMA.items()])
