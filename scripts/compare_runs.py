"""Whether two runs' per_query.parquet and stats.parquet are identical (a refactoring's
check that behaviour stayed the same: the demo before and after, each with its own cache
folder so nothing is reused).

    python scripts/compare_runs.py RUN_DIR_A RUN_DIR_B   # folders holding the two parquets

Exit status 0 when both files are identical, 1 otherwise (the differing columns named).
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

FILES = ("per_query.parquet", "stats.parquet")


def differing(a: Path, b: Path) -> list[str]:
    """What differs between the two runs' files ([] when they are identical)."""
    out = []
    for name in FILES:
        x, y = pl.read_parquet(a / name), pl.read_parquet(b / name)
        if x.columns != y.columns or x.height != y.height:
            out.append(f"{name}: shape {x.shape} vs {y.shape} or columns differ")
        elif not x.equals(y):
            cols = [c for c in x.columns if not x[c].equals(y[c])]
            out.append(f"{name}: columns {', '.join(cols)} differ")
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    diff = differing(Path(argv[0]), Path(argv[1]))
    for line in diff:
        print(line)
    if not diff:
        print(f"identical: {', '.join(FILES)}")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
