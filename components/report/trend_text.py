"""The trend table (components/report/trend.py) as text for the terminal and as Markdown for
the trend page: per metric, each run's mean with its interval and questions, and its step
from the run before (Δ, its interval, corrected p, verdict, and the questions shared)."""

from __future__ import annotations

from typing import Any

import polars as pl

from ablate.components.report.intervals import DISAGREE, DISAGREE_TEXT, disagrees
from ablate.components.report.numbers import finite, fmt, fmt_ci, fmt_p, fmt_signed

WORDS = {"worse": "WORSE", "better": "better", "changed": "changed",
         "not significant": "no significant change"}


def n_text(row: dict[str, Any]) -> str:
    """'30 questions in 5 clusters' (the questions that define the metric)."""
    n, g = row.get("n") or 0, row.get("clusters")
    return f"{n} questions in {g} clusters" if n and g is not None else f"{n} questions"


def shared_text(row: dict[str, Any]) -> str:
    """How many questions the run shares with the one before, and how many each has alone."""
    if row.get("shared") is None:
        return ""
    head = f"{row['shared']} shared"
    if row.get("only_previous") or row.get("only_current"):
        head += (f" ({row['only_previous']} only in run {row['run'] - 1}, "
                 f"{row['only_current']} only in run {row['run']})")
    return head


def step_text(row: dict[str, Any], previous: dict[str, Any] | None) -> str:
    """The step from the run before: 'Δ -0.300 [-0.32, -0.28], p adj <0.001: WORSE; 30 shared'."""
    if previous is None:
        return "first run"
    shared = shared_text(row)
    data = "; other data" if row.get("fingerprint") != previous.get("fingerprint") else ""
    if not finite(row.get("delta")):
        return f"not compared (no common question defines it); {shared}{data}"
    word = WORDS.get(str(row.get("verdict")), str(row.get("verdict")))
    mark = DISAGREE if _disagrees(row) else ""
    interval = fmt_ci(row['delta_ci_low'], row['delta_ci_high'], row['delta'])
    return (f"Δ {fmt_signed(row['delta'])} {interval}{mark}, "
            f"p adj {fmt_p(row['p_adjusted'])}: {word}; {shared}{data}")


def _disagrees(row: dict[str, Any]) -> bool:
    return disagrees({"ci_low": row.get("delta_ci_low"), "ci_high": row.get("delta_ci_high"),
                      "delta": row.get("delta"), "significant": row.get("significant")})


def footnote(table: pl.DataFrame) -> list[str]:
    """The DISAGREE mark's meaning, when a step has it."""
    if any(_disagrees(r) for r in table.iter_rows(named=True)):
        return [f"{DISAGREE} {DISAGREE_TEXT}"]
    return []


def _blocks(table: pl.DataFrame) -> list[tuple[str, list[dict[str, Any]]]]:
    return [(m, table.filter(pl.col("metric") == m).sort("run").to_dicts())
            for m in table["metric"].unique(maintain_order=True).to_list()]


def header(table: pl.DataFrame) -> str:
    """The one-line description of what the table holds."""
    if not table.height:
        return "no runs"
    first = table.row(0, named=True)
    tests = sorted({str(t) for t in table["test"].drop_nulls().to_list()})
    how = (f" ({', '.join(tests)} test over clusters, corrected over the metrics of each step)"
           if tests else "")
    runs = table["run"].n_unique()
    return (f"{first['experiment']}: {runs} run{'s' if runs != 1 else ''} of variant {first['variant']}; "
            f"means with {100 * first['ci_level']:.0f}% cluster-robust intervals; each run against "
            f"the one before, paired on the questions they share{how}")


def runs_list(table: pl.DataFrame) -> list[tuple[int, str, str, str]]:
    """(run, created, label, sweep id) of each run."""
    seen = table.unique("run", keep="first", maintain_order=True).sort("run")
    return [(r["run"], r["created"] or "", r["label"], r["sweep_id"] or "")
            for r in seen.iter_rows(named=True)]


def trend_text(table: pl.DataFrame) -> str:
    """The trend for the terminal."""
    lines = [header(table), ""]
    for metric, rows in _blocks(table):
        lines.append(metric)
        widths = (4, 22, 7, 18, 30)
        lines.append("  ".join(h.ljust(w) for h, w in zip(
            ("run", "created", "mean", f"{100 * rows[0]['ci_level']:.0f}% CI", "n"), widths))
            + "vs the run before")
        for prev, row in zip([None, *rows[:-1]], rows):
            cells = (str(row["run"]), row["created"] or "", fmt(row["mean"]),
                     fmt_ci(row["ci_low"], row["ci_high"], row["mean"]), n_text(row))
            lines.append("  ".join(c.ljust(w) for c, w in zip(cells, widths)) + step_text(row, prev))
        lines.append("")
    lines += footnote(table)
    lines.append("runs:")
    lines += [f"  {run}  {created}  {label}" for run, created, label, _ in runs_list(table)]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def trend_markdown(table: pl.DataFrame, plots: dict[str, str]) -> str:
    """The trend page's body: the header, then per metric its plot (`plots`: metric ->
    image path) and its table; then the runs with where they come from."""
    out = [header(table), ""]
    for metric, rows in _blocks(table):
        out += [f"## {_cell(metric)}", ""]
        if metric in plots:
            out += [f"![{_cell(metric)} across runs]({plots[metric]})", ""]
        out += [f"| run | created | mean | {100 * rows[0]['ci_level']:.0f}% CI | n | vs the run before |",
                "|---|---|---:|---|---|---|"]
        for prev, row in zip([None, *rows[:-1]], rows):
            out.append(f"| {row['run']} | {_cell(row['created'] or '')} | {fmt(row['mean'])} | "
                       f"{fmt_ci(row['ci_low'], row['ci_high'], row['mean'])} | {n_text(row)} | "
                       f"{_cell(step_text(row, prev))} |")
        out.append("")
    out += [*footnote(table), "", "## Runs", "", "| run | created | source | sweep id |", "|---|---|---|---|"]
    out += [f"| {run} | {_cell(created)} | `{_cell(label)}` | `{_cell(sid)}` |"
            for run, created, label, sid in runs_list(table)]
    return "\n".join(out) + "\n"
