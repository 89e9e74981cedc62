"""What each variant spends (components/metrics/cost.py): per question and over the run,
serving's stages (embed, search, rerank, generate, their total) and, beside them, the
judge's. Nothing is said when the sweep priced nothing (every price 0: no cost was
measured, not a free one)."""

from __future__ import annotations

import math
from typing import Sequence

import polars as pl

SERVING = ("cost/embed", "cost/search", "cost/rerank", "cost/generate", "cost/total")
JUDGE = "cost/judge"
HEAD = "## Spend"


def _money(x: float) -> str:
    return "–" if not math.isfinite(x) else f"{x:.4g}"


def spend_table(per_query: pl.DataFrame, order: Sequence[str]) -> dict[str, dict[str, tuple[float, float]]]:
    """variant -> cost column -> (mean per question, sum over the run), over its finite
    values (NaN when none); empty when no cost column holds a price."""
    cols = [c for c in (*SERVING, JUDGE) if c in per_query.columns]
    if not cols:
        return {}
    priced = per_query.select([pl.col(c).cast(pl.Float64).fill_nan(None) for c in cols])
    if not any((priced[c].drop_nulls() != 0).any() for c in cols):
        return {}
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for v in order:
        rows = per_query.filter(pl.col("variant") == v)
        cells: dict[str, tuple[float, float]] = {}
        for c in cols:
            x = rows[c].cast(pl.Float64).fill_nan(None).drop_nulls()
            cells[c] = ((float(x.mean()), float(x.sum()))  # type: ignore[arg-type]
                        if x.len() else (math.nan, math.nan))
        out[v] = cells
    return out


def spend_section(per_query: pl.DataFrame, order: Sequence[str]) -> list[str]:
    """The report's spend table (Markdown lines; empty when nothing was priced)."""
    table = spend_table(per_query, order)
    if not table:
        return []
    cols = [c for c in (*SERVING, JUDGE) if c in next(iter(table.values()))]
    judged = JUDGE in cols
    names = [c.partition("/")[2] for c in cols]
    out = [HEAD, "",
           "US dollars per question (mean) at the experiment's `costs:` prices, stage by "
           "stage: `total` is what serving a question costs (embed, search, rerank, "
           "generate)" + ("; `judge` is what judging it costs, beside serving, not in it"
                          if judged else "") + ". The last column sums the run's questions"
           + (" (serving and judging)." if judged else "."), "",
           "| variant | " + " | ".join(names) + " | run |",
           "|---|" + "---:|" * (len(cols) + 1)]
    for v, cells in table.items():
        run = sum(s for c, (_, s) in cells.items() if c in ("cost/total", JUDGE) and math.isfinite(s))
        out.append(f"| {v} | " + " | ".join(_money(cells[c][0]) for c in cols)
                   + f" | {_money(run)} |")
    return out


def spend_lines(per_query: pl.DataFrame, order: Sequence[str]) -> list[str]:
    """summary.txt's spend: one line per variant (empty when nothing was priced)."""
    table = spend_table(per_query, order)
    if not table:
        return []
    width = max(len(v) for v in table) + 2
    out = ["spend (US dollars at the experiment's prices):"]
    for v, cells in table.items():
        serving = cells.get("cost/total", (math.nan, math.nan))
        line = f"{v.ljust(width)}serving {_money(serving[0])}/question ({_money(serving[1])} in all)"
        if JUDGE in cells:
            judge = cells[JUDGE]
            line += f", judge {_money(judge[0])}/question ({_money(judge[1])} in all)"
        out.append(line)
    return out
