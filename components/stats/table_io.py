"""Read per-question tables (parquet or CSV, long or wide form) into the wide form.

Accepts tables made by other tools: column names are detected from common aliases
(run/system for variant, query_id/question_id for qid, measure for metric, score for
value) unless given. Long form (variant, qid, metric, value) is pivoted to wide.
Every problem is an InputError naming the file and the column.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ablate.components.contract.errors import InputError
from ablate.components.stats.clusters import cluster_column

VARIANT_ALIASES = ("variant", "run", "run_name", "system", "name", "config_id")
QID_ALIASES = ("qid", "question_id", "query_id", "qry_id", "query", "id")
METRIC_ALIASES = ("metric", "measure", "metric_name")
VALUE_ALIASES = ("value", "score", "metric_value")
NULL_STRINGS = ["", "NA", "N/A", "nan", "NaN", "null", "None", "undefined"]


@dataclass(frozen=True)
class PerQueryTable:
    """A wide per-question table plus the names of its key columns and metrics."""

    table: pl.DataFrame
    variant_col: str
    qid_col: str
    metrics: list[str]
    long_form: bool
    cluster_col: str | None = None  # the column naming each question's cluster, if any


def read_table(path: str | Path) -> pl.DataFrame:
    """Read parquet, CSV or TSV by extension."""
    p = Path(path)
    if not p.is_file():
        raise InputError("file not found", path=str(p))
    suffix = "".join(p.suffixes[-2:]).lower() if p.suffix == ".gz" else p.suffix.lower()
    try:
        if suffix in (".parquet", ".pq"):
            return pl.read_parquet(p)
        if suffix in (".csv", ".tsv", ".csv.gz", ".tsv.gz"):
            sep = "\t" if suffix.startswith(".tsv") else ","
            return pl.read_csv(p, separator=sep, null_values=NULL_STRINGS,
                               infer_schema_length=None)
    except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
        raise InputError(f"cannot read table: {str(exc).splitlines()[0]}", path=str(p)) from None
    raise InputError("unknown table format (expected .parquet, .csv or .tsv)", path=str(p))


def _line(path: str, row: int) -> int | None:
    """File line of a data row (CSV/TSV with one header line); None for parquet."""
    return None if path.lower().endswith((".parquet", ".pq")) else row + 2


def _pick(columns: list[str], given: str | None, aliases: tuple[str, ...], role: str,
          path: str) -> str:
    if given is not None:
        if given not in columns:
            raise InputError(f"no {role} column '{given}' (columns: {', '.join(columns)})",
                             path=path, field=given)
        return given
    lower = {c.lower(): c for c in columns}
    for a in aliases:
        if a in lower:
            return lower[a]
    raise InputError(f"no {role} column (tried {', '.join(aliases)}; columns: "
                     f"{', '.join(columns)})", path=path, field=aliases[0])


def _pivot_long(df: pl.DataFrame, v: str, q: str, metric: str, value: str,
                cluster_col: str | None, path: str) -> pl.DataFrame:
    vals = df[value]
    if vals.dtype == pl.String:
        cast = vals.cast(pl.Float64, strict=False)
        bad = cast.is_null() & vals.is_not_null()
        if bad.any():
            row = bad.arg_max()
            assert row is not None  # the mask has a True (checked above)
            raise InputError(f"value '{vals[row]}' is not a number (row {row + 1})",
                             path=path, line=_line(path, row), field=value)
        df = df.with_columns(cast.alias(value))
    elif not (vals.dtype.is_numeric() or vals.dtype in (pl.Boolean, pl.Null)):
        raise InputError(f"value column is not numeric (dtype {vals.dtype})", path=path,
                         field=value)
    df = df.with_columns(pl.col(metric).cast(pl.String), pl.col(value).cast(pl.Float64))
    keys = [v, q, metric]
    dup = ~df.select(pl.struct(keys).is_first_distinct()).to_series()
    if dup.any():
        row = dup.arg_max()
        assert row is not None  # the mask has a True (checked above)
        raise InputError(f"duplicate row for variant '{df[v][row]}', question "
                         f"'{df[q][row]}', metric '{df[metric][row]}' (row {row + 1})",
                         path=path, line=_line(path, row), field=metric)
    wide = df.pivot(on=metric, index=[v, q], values=value, aggregate_function=None,
                    sort_columns=True)
    if cluster_col is not None:
        clusters = df.select(v, q, cluster_col).unique(subset=[v, q], keep="first",
                                                       maintain_order=True)
        wide = wide.join(clusters, on=[v, q], how="left")
    return wide


def load_per_query(path: str | Path, *, variant_col: str | None = None,
                   qid_col: str | None = None, metric_col: str | None = None,
                   value_col: str | None = None, cluster_col: str | None = None
                   ) -> PerQueryTable:
    """Read a per-question table in long or wide form and return it in wide form.
    cluster_col `auto`: the `cluster` column when there is one, else none."""
    spath = str(path)
    df = read_table(path)
    cols = df.columns
    if cluster_col in ("auto", "none"):
        cluster_col = cluster_column(cluster_col, cols)
    v = _pick(cols, variant_col, VARIANT_ALIASES, "variant", spath)
    q = _pick(cols, qid_col, QID_ALIASES, "question id", spath)
    if cluster_col is not None and cluster_col not in cols:
        raise InputError(f"no cluster column '{cluster_col}'", path=spath, field=cluster_col)
    lower = {c.lower() for c in cols}
    is_long = metric_col is not None or (
        any(a in lower for a in METRIC_ALIASES) and any(a in lower for a in VALUE_ALIASES))
    if is_long:
        m = _pick(cols, metric_col, METRIC_ALIASES, "metric", spath)
        val = _pick(cols, value_col, VALUE_ALIASES, "value", spath)
        df = _pivot_long(df, v, q, m, val, cluster_col, spath)
        metrics = [c for c in df.columns if c not in (v, q, cluster_col)]
    else:
        skip = {v, q, cluster_col}
        metrics = [c for c in cols if c not in skip
                   and (df[c].dtype.is_numeric() or df[c].dtype == pl.Boolean)]
    return PerQueryTable(df, v, q, metrics, is_long, cluster_col)
