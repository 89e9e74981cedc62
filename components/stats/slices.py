"""The key comparisons per slice of the questions (`report.slices: [type, ...]`): for each
value of a question column, every variant against the baseline on each key metric,
restricted to the questions of that value.

A slice comparison is an ordinary comparison on a narrower column: the key metric's
values kept on the slice's questions and undefined (NaN) elsewhere, so it is paired on
question id, clustered (the sweep's cluster column: questions sharing a document are one
unit) and tested with the sweep's test and interval. Slices are a view (issue 54): they
are corrected in families of their own, one per key metric and slice column (`family:
all`: one per slice column; `family_of`), in a run apart from the main comparisons
(`slice_comparisons`), so asking for slices never changes a main verdict.

A slice whose questions come in too few clusters for the test to reach alpha at all
(the sign-flip test's smallest p is 2 / 2^G) is not tested: its row carries the means
and counts, no p and no interval, and `note` says why; a slice where no question defines
the metric at all (retrieval metrics on unanswerable questions, which have no evidence)
says that instead (UNDEFINED). Such a comparison is in no family (it is no test). Rows go
to slices.parquet (SLICE_SCHEMA: compare's columns plus `slice_column`, `slice_value`,
`slice`, `note`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import polars as pl

from ablate.components.stats.compare import OUTPUT_SCHEMA
from ablate.components.stats.tails import SLICE_MARK

SLICES_FILE = "slices.parquet"
_MARK = SLICE_MARK  # a widened column: f"{metric}{_MARK}{slice}"
TOO_FEW = "too few clusters to test"
UNDEFINED = "undefined on this slice by definition"
SLICE_SCHEMA: dict[str, pl.DataType] = {
    "slice_column": pl.String(), "slice_value": pl.String(), "slice": pl.String(),
    **OUTPUT_SCHEMA, "note": pl.String(),
}


@dataclass(frozen=True)
class SliceColumn:
    """One widened column: a key metric on the questions of one slice."""

    column: str  # the widened column's name
    metric: str
    slice_column: str
    slice_value: str


def value_label(value: object) -> str:
    """A slice value as text: `true`/`false` for a flag, else str()."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def smallest_p(n_clusters: int) -> float:
    """The smallest two-sided p the sign-flip test reaches on G clusters: 2 / 2^G."""
    return 2.0 / 2.0 ** n_clusters if n_clusters > 0 else 1.0


def widen(per_query: pl.DataFrame, *, slices: Sequence[str], metrics: Sequence[str],
          baseline: str, alpha: float, cluster_col: str | None,
          ) -> tuple[pl.DataFrame, list[SliceColumn], pl.DataFrame]:
    """(per_query with one column per testable (metric, slice), those columns, the rows
    of the untestable ones: SLICE_SCHEMA with means and counts, no p). `metrics`: the
    key metrics among the tested columns; a slice column per_query lacks is skipped."""
    added: list[pl.Expr] = []
    cols: list[SliceColumn] = []
    untested: list[dict[str, object]] = []
    unit = cluster_col or "qid"
    others = sorted(set(per_query["variant"].to_list()) - {baseline})
    for name in slices:
        if name not in per_query.columns:
            continue
        values = per_query[name].drop_nulls().unique().sort().to_list()
        for value in values:
            label = value_label(value)
            inside = pl.col(name) == value
            for m in metrics:
                part = per_query.filter(inside & pl.col(m).is_not_nan() & pl.col(m).is_not_null())
                base = part.filter(pl.col("variant") == baseline)
                g = base[unit].n_unique() if base.height else 0
                if smallest_p(g) <= alpha:
                    col = f"{m}{_MARK}{name}={label}"
                    added.append(pl.when(inside).then(pl.col(m)).otherwise(math.nan).alias(col))
                    cols.append(SliceColumn(col, m, name, label))
                    continue
                untested.extend(_described(part, m, name, label, baseline, unit, others))
    table = per_query.with_columns(added) if added else per_query
    return table, cols, pl.DataFrame(untested, schema=SLICE_SCHEMA)


def _described(part: pl.DataFrame, metric: str, name: str, label: str, baseline: str,
               unit: str, variants: Sequence[str]) -> list[dict[str, object]]:
    """Rows of an untested slice comparison: paired means and counts, no test."""
    base = part.filter(pl.col("variant") == baseline).select(
        "qid", *([unit] if unit != "qid" else []), pl.col(metric).alias("b"))
    out = []
    for variant in variants:
        mine = part.filter(pl.col("variant") == variant).select("qid", pl.col(metric).alias("v"))
        both = mine.join(base, on="qid")
        g = both[unit].n_unique() if both.height else 0
        mv = float(both["v"].mean()) if both.height else math.nan  # type: ignore[arg-type]
        mb = float(both["b"].mean()) if both.height else math.nan  # type: ignore[arg-type]
        note = (f"{UNDEFINED} (no question of it has a {metric} value)" if not both.height
                else f"{TOO_FEW} ({g}: the test's smallest p, 2/2^{g}, is above alpha)")
        out.append({"slice_column": name, "slice_value": label, "slice": f"{name}={label}",
                    "metric": metric, "variant": variant, "baseline": baseline,
                    "n_used": both.height, "n_clusters": g, "mean_variant": mv,
                    "mean_baseline": mb, "delta": mv - mb, "significant": False,
                    "note": note})
    return out


def sliced_inputs(per_query: pl.DataFrame, *, slices: Sequence[str], key: Sequence[str],
                  tested: Sequence[str], baseline: str, alpha: float, cluster_col: str | None,
                  ) -> tuple[pl.DataFrame, list[SliceColumn], pl.DataFrame]:
    """widen() on the key metrics the statistics test (a `final/` key metric a sweep lacks
    stands in at its latest earlier stage, as in the report: sweep_data.present_key)."""
    have = set(tested)
    metrics: list[str] = []
    for m in key:
        stage, _, rest = m.partition("/")
        options = [m] + ([f"reranked/{rest}", f"candidates/{rest}"] if stage == "final" else [])
        found = next((c for c in options if c in have), None)
        if found is not None and found not in metrics:
            metrics.append(found)
    if not slices or not metrics:
        return per_query, [], pl.DataFrame(schema=SLICE_SCHEMA)
    return widen(per_query, slices=slices, metrics=metrics, baseline=baseline, alpha=alpha,
                 cluster_col=cluster_col)


def family_of(cols: Sequence[SliceColumn], family: str = "per_metric") -> dict[str, str]:
    """The family of each widened column: its key metric's on its slice column (all that
    column's values), for `per_metric`; the slice column's, for `all`. Never a main
    comparison's family."""
    return {c.column: (f"{_MARK}{c.slice_column}" if family == "all"
                       else f"{c.metric}{_MARK}{c.slice_column}") for c in cols}


def slice_comparisons(table: pl.DataFrame, cols: Sequence[SliceColumn], *, baseline: str,
                      family: str, **compare: Any) -> pl.DataFrame:
    """The tests of the widened columns `cols` of `table` (sliced_inputs), in their own
    families (family_of), apart from the main comparisons: compare_joint's rows, to put
    beside the main table before joined()."""
    from ablate.components.stats.compare import compare_joint
    if not cols:
        return pl.DataFrame(schema=OUTPUT_SCHEMA)
    stats, _, _ = compare_joint(table, baseline=baseline, metrics=[c.column for c in cols],
                                family="per_metric", family_of=family_of(cols, family),
                                **compare)
    return stats.with_columns(pl.lit(family).alias("family"))


def joined(stats: pl.DataFrame, cols: Sequence[SliceColumn],
           untested: pl.DataFrame) -> pl.DataFrame:
    """A joint run's table with its slice rows named (metric: the key metric, `slice`
    set; main rows: `slice` null, and no slice column at all without slices)."""
    if not cols and not untested.height:
        return stats
    by_col = {c.column: c for c in cols}
    is_slice = pl.col("metric").is_in(list(by_col))
    main = stats.filter(~is_slice)
    rows = stats.filter(is_slice)
    meta = pl.DataFrame({"metric_col": [c.column for c in cols], "m": [c.metric for c in cols],
                         "slice_column": [c.slice_column for c in cols],
                         "slice_value": [c.slice_value for c in cols]},
                        schema={"metric_col": pl.String, "m": pl.String,
                                "slice_column": pl.String, "slice_value": pl.String})
    rows = rows.join(meta, left_on="metric", right_on="metric_col", how="left").with_columns(
        pl.col("m").alias("metric"),
        pl.concat_str("slice_column", pl.lit("="), "slice_value").alias("slice"),
        pl.lit(None, dtype=pl.String).alias("note"),
        # a question outside the slice is left out by design, not undefined
        *[pl.lit(None, dtype=pl.Int64).alias(c) for c in
          ("n_undefined", "n_undefined_variant", "n_undefined_baseline")]).drop("m")
    sliced = pl.concat([rows.select([c for c in SLICE_SCHEMA if c in rows.columns]), untested],
                       how="diagonal_relaxed")
    return pl.concat([main, sliced], how="diagonal_relaxed")


def take(stats: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """(stats.parquet's rows, slices.parquet's rows or None) of a joined() table."""
    if "slice" not in stats.columns:
        return stats, None
    extra = [c for c in SLICE_SCHEMA if c not in OUTPUT_SCHEMA]
    main = stats.filter(pl.col("slice").is_null()).drop(extra)
    sliced = stats.filter(pl.col("slice").is_not_null())
    sliced = sliced.select([c for c in sliced.columns if c in SLICE_SCHEMA or c not in main.columns])
    return main, sliced.sort("slice_column", "slice_value", "metric", "variant")
