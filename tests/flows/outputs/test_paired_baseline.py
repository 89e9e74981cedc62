"""Every row of the report's sweep tables, the Prefect summary rows and the terminal
summary shows the baseline's mean on exactly that comparison's questions (stats.parquet's
mean_baseline), so a variant run on a nested sample reconciles with the number it was
compared with. On the nested-sample sweep of test_sweep_samples (run directly: seconds)."""

from __future__ import annotations

import polars as pl

from ablate.components.report.numbers import fmt, fmt_signed

# SPEC: the shared `sweep` fixture runs it
from tests.flows.plan.test_sweep_samples import SPEC  # noqa: F401


def _tables(report: str) -> dict[tuple[str, str], dict[str, str]]:
    """(metric, variant) -> {column header: cell} of every sweep table in report.md."""
    out: dict[tuple[str, str], dict[str, str]] = {}
    header: list[str] | None = None
    for line in report.splitlines():
        if line.startswith("|---"):
            continue
        if not line.startswith("| "):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            continue
        if len(header) < 4 or header[:2] != ["variant", "value"]:
            continue
        out[header[2], cells[0]] = dict(zip(header, cells))
    return out


def test_each_row_shows_the_baseline_mean_on_its_own_questions(sweep):
    _, folder, _ = sweep
    stats = pl.read_parquet(folder / "stats.parquet")
    tables = _tables((folder / "report.md").read_text())
    col = "[baseline, same questions](#glossary)"
    pq = pl.read_parquet(folder / "per_query.parquet")
    checked = 0
    for r in stats.filter(pl.col("metric").is_in(["final/recall_at_5", "answer/f1"])).iter_rows(named=True):
        row = tables[r["metric"], r["variant"]]
        assert row[col] == fmt(r["mean_baseline"]), (r["metric"], r["variant"], row)
        # the paired baseline mean is the baseline's over exactly the comparison's questions
        qids = pq.filter(pl.col("variant") == r["variant"])["qid"]
        base = pq.filter((pl.col("variant") == "baseline") & pl.col("qid").is_in(qids.to_list()))
        assert row[col] == fmt(base[r["metric"]].fill_nan(None).mean())
        checked += 1
    assert checked == 4
    # the nested sample's paired baseline is not the baseline row's mean over all 30
    assert tables["answer/f1", "fusion.rrf_k=10"][col] != tables["answer/f1", "baseline"]["answer/f1"]
    assert tables["answer/f1", "baseline"][col] == ""
    report = (folder / "report.md").read_text()
    assert "column is the baseline's mean on that comparison's own questions" in report


def test_summary_and_prefect_rows_show_the_paired_baseline(sweep):
    from ablate.components.report.summary import summary_rows
    from ablate.components.report.sweep_data import load_sweep
    _, folder, _ = sweep
    stats = pl.read_parquet(folder / "stats.parquet")
    summary = (folder / "summary.txt").read_text()
    rows = {(r["variant"], r["metric"]): r for r in summary_rows(load_sweep(folder))}
    for r in stats.filter(pl.col("metric").is_in(["final/recall_at_5", "answer/f1"])).iter_rows(named=True):
        assert f"({fmt_signed(r['delta'])} vs {fmt(r['mean_baseline'])}" in summary
        assert rows[r["variant"], r["metric"]]["baseline_same_questions"] == fmt(r["mean_baseline"])
    assert "baseline's mean on the same questions" in summary
