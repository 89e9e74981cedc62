"""Latency per question from timings.parquet: the end-to-end latency (the sum of a
question's stage latencies, as the latency table and the trade-off front read it) and the
report's latency table (p50 / p95 per variant and stage)."""

from __future__ import annotations

from typing import Sequence

import polars as pl

E2E = "end-to-end"


def with_end_to_end(timings: pl.DataFrame) -> pl.DataFrame:
    """`timings` plus `latency/end-to-end`: per question, the sum of its stage latencies
    (stages a variant does not run count 0; NaN when it has none)."""
    lat = [c for c in timings.columns if c.startswith("latency/") and c != f"latency/{E2E}"]
    if not lat:
        return timings
    filled = [pl.col(c).fill_nan(None) for c in lat]
    total = pl.when(pl.any_horizontal([f.is_not_null() for f in filled])).then(
        pl.sum_horizontal(filled)).otherwise(None)
    return timings.with_columns(total.cast(pl.Float64).alias(f"latency/{E2E}"))


def latency_table(timings: pl.DataFrame, variants: Sequence[str] | None = None,
                  stages: Sequence[str] | None = None) -> str:
    """Per variant and stage, and end to end: p50 / p95 milliseconds per question (cache
    hits keep the latency measured when the result was computed; a cell holding such a
    latency, timings.parquet's `reused/<stage>`, is marked ↺ with one footnote)."""
    timings = with_end_to_end(timings)
    cols = [c for c in timings.columns if c.startswith("latency/") and c != f"latency/{E2E}"]
    cols = [c for c in cols if stages is None or c in stages]
    if f"latency/{E2E}" in timings.columns:
        cols.append(f"latency/{E2E}")
    order = (timings["variant"].unique(maintain_order=True).to_list() if variants is None
             else [v for v in variants if v in set(timings["variant"].to_list())])
    out = ["| variant | " + " | ".join(f"{c.removeprefix('latency/')} p50 / p95 ms" for c in cols) + " |",
           "|---|" + "---:|" * len(cols)]
    marked = False
    for name in order:
        rows = timings.filter(pl.col("variant") == name)
        reused = {c: _reused(rows, c) for c in cols if c != f"latency/{E2E}"}
        reused[f"latency/{E2E}"] = any(reused.values())
        cells = []
        for c in cols:
            col = rows[c].cast(pl.Float64)
            col = col.filter(col.is_finite())  # no null, NaN or inf
            cells.append("–" if col.len() == 0 else _p50_p95_ms(col) + (" ↺" if reused[c] else ""))
            marked |= col.len() > 0 and reused[c]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    if marked:
        out += ["", "↺ recorded when the result was computed (an earlier run's stage, or query "
                "vectors or answers from the cache), not timed by this run."]
    return "\n".join(out)


def _reused(rows: pl.DataFrame, latency_col: str) -> bool:
    """Whether any of these questions' `latency_col` was recorded earlier and reused."""
    col = "reused/" + latency_col.removeprefix("latency/")
    return col in rows.columns and bool(rows[col].fill_null(False).any())


def _p50_p95_ms(col: pl.Series) -> str:
    """'p50 / p95' in ms of a non-empty column of seconds without nulls."""
    p50, p95 = col.quantile(0.5, "linear"), col.quantile(0.95, "linear")
    assert p50 is not None and p95 is not None  # only an empty column has no quantile
    return f"{p50 * 1e3:.1f} / {p95 * 1e3:.1f}"
