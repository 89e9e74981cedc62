"""A 2 x 2 two-level factorial sweep end to end without Prefect or MLflow (as
test_factorial_sweep.py): worth.parquet holds the Shapley values and the interaction index
per key metric, adding up to full minus empty, and the report shows the worth section and
its plot (also when rebuilt from the folder)."""

from __future__ import annotations

import polars as pl
import pytest

# SPEC: the shared `sweep` fixture runs it
from tests.flows.outputs.test_factorial_sweep import CELLS, SPEC  # noqa: F401


def test_worth_parquet_holds_shapley_values_that_add_up(sweep):
    _, out, _ = sweep
    worth = pl.read_parquet(out / "worth.parquet")
    for col in ("factor", "metric", "kind", "value", "ci_low", "ci_high", "p_adjusted",
                "full_minus_empty"):
        assert col in worth.columns
    assert set(worth["metric"]) == {"final/recall_at_5", "answer/f1"}   # the key metrics
    f1 = worth.filter(pl.col("metric") == "answer/f1")
    assert f1["factor"].to_list() == ["chunking.size", "context.budget",
                                      "chunking.size × context.budget"]
    assert f1["kind"].to_list() == ["shapley", "shapley", "interaction"]
    sv = f1.filter(pl.col("kind") == "shapley")
    assert sv["value"].sum() == pytest.approx(sv["full_minus_empty"][0], abs=1e-9)
    per_query = pl.read_parquet(out / "per_query.parquet")
    mean = {r["variant"]: r["answer/f1"] for r in
            per_query.group_by("variant").agg(pl.col("answer/f1").mean()).iter_rows(named=True)}
    # two factors: phi_A = ((A) - (0) + (AB) - (B)) / 2; the index is the difference of differences
    a = (mean["chunking.size=96"] - mean["baseline"] + mean[CELLS[3]] - mean["context.budget=40"]) / 2
    assert sv.row(0, named=True)["value"] == pytest.approx(a, abs=1e-12)
    inter = mean[CELLS[3]] - mean["chunking.size=96"] - mean["context.budget=40"] + mean["baseline"]
    assert abs(inter) > 0.001
    assert f1.row(2, named=True)["value"] == pytest.approx(inter, abs=1e-12)
    assert (f1["ci_low"] <= f1["value"]).all() and (f1["value"] <= f1["ci_high"]).all()


def test_report_shows_the_worth_section_and_plot(sweep):
    from ablate.components.report.build import build_report
    from ablate.components.report.sweep_data import load_sweep
    _, out, _ = sweep
    report = (out / "report.md").read_text()
    assert "## Worth: what each part is worth" in report
    section = report.split("## Worth: what each part is worth")[1].split("\n## ")[0]
    assert "plots/worth.svg" in section and "### answer/f1" in section
    assert "| chunking.size (96) |" in section and "| chunking.size × context.budget (96 × 40) |" in section
    assert (out / "plots" / "worth.svg").read_bytes()[:5] == b"<?xml"
    files = build_report(load_sweep(out))
    assert files["report.md"] == report


def test_worth_run_metrics_name_factor_and_metric(sweep):
    from ablate.components.stats.worth_table import worth_run_metrics
    _, out, _ = sweep
    m = worth_run_metrics(pl.read_parquet(out / "worth.parquet"))
    assert "worth/chunking.size/answer/f1" in m
    assert m["worth/chunking.size/answer/f1/ci_low"] <= m["worth/chunking.size/answer/f1"]
    assert "worth/chunking.size:context.budget/answer/f1/ci_high" in m


def test_the_mlflow_parent_carries_the_worth_metrics(sweep, tmp_path):
    from mlflow.tracking import MlflowClient

    from ablate.flows.track.tracking import log_sweep
    _, out, _ = sweep
    uri = f"sqlite:///{tmp_path}/m.db"
    ids = log_sweep(out, uri, artifact_root=str(tmp_path / "art"))
    metrics = MlflowClient(uri).get_run(ids["parent"]).data.metrics
    worth = pl.read_parquet(out / "worth.parquet").filter(pl.col("metric") == "answer/f1")
    row = worth.row(0, named=True)
    assert metrics["worth/chunking.size/answer/f1"] == pytest.approx(row["value"])
    assert metrics["worth/chunking.size/answer/f1/ci_low"] == pytest.approx(row["ci_low"])
    assert metrics["worth/chunking.size/answer/f1/ci_high"] == pytest.approx(row["ci_high"])


def test_check_prints_the_stages_the_cells_need(sweep):
    from ablate.flows.cli.check import plan_lines
    ctx, out, _ = sweep
    lines = plan_lines(ctx, out.parent)
    i = next(i for i, x in enumerate(lines) if x.startswith("design:"))
    # 2 chunkings x 2 budgets: 2 chunk, 2 label, 2 retrieve, 2 rerank stages, 4 assemble ...
    assert lines[i + 1].startswith("           the cells need ")
    assert "chunk 2" in lines[i + 1] and "assemble 4" in lines[i + 1]
    assert "(" in lines[i + 1] and "cached)" in lines[i + 1]
