"""A run whose generations all failed (issue 39.9): the report was written, with every
answer metric of those variants undefined, and `ablate run` exited 0 without a word (a
wrong endpoint, a server that is down, a missing key). The variants whose every question
has `answer/generation_error` = 1 in per_query.parquet are named by `ablate run` in one
line, exit 1: their failed generations are not cached, so the same command tries them
again.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

COLUMN = "answer/generation_error"


def all_generations_failed(sweep_dir: Path) -> list[str]:
    """The variants of a sweep folder every one of whose generations failed."""
    path = Path(sweep_dir) / "per_query.parquet"
    try:
        frame = pl.read_parquet(path, columns=["variant", COLUMN])
    except (OSError, pl.exceptions.ColumnNotFoundError, pl.exceptions.ComputeError):
        return []  # no generate stage (retrieval only), or no such file
    failed = (frame.group_by("variant", maintain_order=True)
              .agg((pl.col(COLUMN) == 1).all().alias("all"), pl.len().alias("n"))
              .filter(pl.col("all") & (pl.col("n") > 0)))
    return failed["variant"].to_list()
