"""End-to-end latency per question from timings.parquet's stage latencies, as the latency
table and the trade-off front read it."""

from __future__ import annotations

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
