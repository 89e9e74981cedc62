"""Validate a wide per-question table and turn it into dense arrays for the tests.

Wide form: one row per (variant, question), a variant column, a question-id column, an
optional cluster column and one numeric column per metric. Null, NaN and +-inf scores
are undefined. Variants, questions and metrics are sorted, so row order never matters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import polars as pl

from ablate.components.contract.errors import InputError


@dataclass(frozen=True)
class WideTable:
    """Dense view: values[variant, question, metric] (NaN = undefined or missing)."""

    variants: list[str]
    qids: list[object]
    metrics: list[str]
    values: np.ndarray          # float64, shape (n_variants, n_questions, n_metrics)
    present: np.ndarray         # bool, shape (n_variants, n_questions): row exists
    clusters: np.ndarray        # int64 cluster code per question (own code if none)


def _require(table: pl.DataFrame, col: str, role: str) -> None:
    if col not in table.columns:
        raise InputError(f"no {role} column '{col}' (columns: {', '.join(table.columns)})",
                         field=col)
    if table[col].null_count():
        row = table[col].is_null().arg_max()
        assert row is not None  # the mask has a True (checked above)
        raise InputError(f"{role} column has an empty value (row {row + 1})", field=col)


def _metric_values(table: pl.DataFrame, metric: str) -> np.ndarray:
    if metric not in table.columns:
        raise InputError(f"no metric column '{metric}'", field=metric)
    s = table[metric]
    if s.dtype == pl.Boolean or s.dtype.is_numeric():
        return s.cast(pl.Float64).to_numpy().astype(np.float64, copy=False)
    if s.dtype == pl.Null:
        return np.full(table.height, np.nan)
    raise InputError(f"metric column is not numeric (dtype {s.dtype})", field=metric)


def checked_cluster_codes(table: pl.DataFrame, cluster_col: str | None, qcodes: np.ndarray, nq: int,
                  *, off: str = "stats.cluster: none", field: str | None = None) -> np.ndarray:
    """One cluster code per question (each question its own cluster without a column).
    A missing column, a question without a value, a question with two values, or one
    value for every question is an InputError (naming `field`, default the column; `off`
    says how to turn clustering off): never a silent fall-back to independent questions."""
    if cluster_col is None:
        return np.arange(nq, dtype=np.int64)
    field = field or cluster_col
    if cluster_col not in table.columns:
        raise InputError(f"no cluster column '{cluster_col}' (columns: "
                         f"{', '.join(table.columns)})", field=field)
    col = table[cluster_col].cast(pl.String)
    if col.null_count() or (col == "").any():
        row = (col.is_null() | (col == "")).arg_max()
        assert row is not None  # the mask has a True (checked above)
        raise InputError(f"the cluster column '{cluster_col}' has an empty value (row {row + 1}); "
                         f"give every question a cluster, or turn clustering off ({off})",
                         field=field)
    pairs = pl.DataFrame({"q": qcodes, "c": col}).unique().sort("q")
    if pairs["q"].is_duplicated().any():
        raise InputError(f"a question has more than one value in the cluster column "
                         f"'{cluster_col}'", field=field)
    labels = pairs["c"].to_numpy()
    if nq > 1 and np.unique(labels).size == 1:
        raise InputError(f"every question is in one cluster ('{labels[0]}'): nothing to "
                         f"compare clusters with; name another column, or turn clustering "
                         f"off ({off})", field=field)
    _, lab_codes = np.unique(labels, return_inverse=True)
    codes = np.empty(nq, dtype=np.int64)
    codes[pairs["q"].to_numpy()] = lab_codes
    return codes


def question_codes(qid: pl.Series) -> np.ndarray:
    """0..Q-1 per row, in sorted question-id order."""
    return (qid.rank("dense") - 1).cast(pl.Int64).to_numpy()


def prepare_wide(table: pl.DataFrame, *, metrics: Sequence[str], variant_col: str = "variant",
                 qid_col: str = "qid", cluster_col: str | None = None) -> WideTable:
    """Check columns, duplicates and types; return the dense WideTable."""
    _require(table, variant_col, "variant")
    _require(table, qid_col, "question id")
    metrics = sorted(dict.fromkeys([metrics] if isinstance(metrics, str) else metrics))
    if not metrics:
        raise InputError("no metric to compare", field="metrics")
    vals = np.stack([_metric_values(table, m) for m in metrics], axis=1) if table.height \
        else np.zeros((0, len(metrics)))
    var = table[variant_col].cast(pl.String)
    qid = table[qid_col]
    vcodes = (var.rank("dense") - 1).cast(pl.Int64).to_numpy()
    qcodes = question_codes(qid)
    variants = var.unique().sort().to_list()
    qids = qid.unique().sort().to_list()
    keys = pl.DataFrame({"v": vcodes, "q": qcodes})
    dup = ~keys.select(pl.struct("v", "q").is_first_distinct()).to_series()
    if dup.any():
        row = dup.arg_max()
        assert row is not None  # the mask has a True (checked above)
        raise InputError(f"duplicate row for variant '{var[row]}' and question "
                         f"'{qid[row]}' (row {row + 1})", field=qid_col)
    nv, nq = len(variants), len(qids)
    values = np.full((nv, nq, len(metrics)), np.nan)
    values[vcodes, qcodes, :] = vals
    values[~np.isfinite(values)] = np.nan
    present = np.zeros((nv, nq), dtype=bool)
    present[vcodes, qcodes] = True
    clusters = checked_cluster_codes(table, cluster_col, qcodes, nq)
    return WideTable(variants, qids, metrics, values, present, clusters)


def paired_differences(per_query: pl.DataFrame, baseline: str, variant: str, metric: str,
                       cluster_col: str | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """(variant - baseline per question of a long per-query table (a `variant` and a `qid`
    column), paired on qid, NaN where either is undefined; each question's cluster label,
    None without a cluster column). Used by `ablate power` and the sequential looks."""
    def scores(name: str) -> pl.DataFrame:
        return (per_query.filter(pl.col("variant") == name)
                .select("qid", pl.col(metric).cast(pl.Float64).fill_null(float("nan")),
                        *([pl.col(cluster_col).cast(pl.String).alias("_cluster")]
                          if cluster_col else [])))
    both = scores(variant).join(scores(baseline), on="qid", how="inner", suffix="_b")
    d = (both[metric] - both[f"{metric}_b"]).to_numpy()
    return d, both["_cluster_b"].to_numpy() if cluster_col else None
