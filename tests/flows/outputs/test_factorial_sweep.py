"""A 2 x 2 factorial sweep end to end without Prefect or MLflow (stages run directly, BM25
only, extractive answers): cells share stages, variants.json records their levels,
factorial.parquet holds the effects, and the report (also rebuilt from the folder) shows
the interaction section and plots."""

from __future__ import annotations

import json

import polars as pl
import pytest

from tests.specs import FAST_STATS, experiment, pipeline

SPEC = experiment(
    "factorial", tier="full", split="all", seed=5,
    metrics={"ks": [1, 5], "key": ["final/recall_at_5", "answer/f1"]}, stats=FAST_STATS,
    baseline=pipeline(chunking={"size": 48, "overlap": 16},
                      rerank={"method": "composite", "depth": 6, "weights": {"fusion": 1.0}},
                      context={"budget": 128}),
    design={"kind": "factorial",
            "variables": {"chunking.size": [48, 96], "context.budget": [128, 40]}})
CELLS = ["baseline", "chunking.size=96", "context.budget=40",
         "chunking.size=96 × context.budget=40"]


def test_cells_share_stages_like_one_factor_variants(sweep):
    ctx, _, _ = sweep
    assert [v.name for v in ctx.variants] == CELLS
    keys = ctx.plan.by_variant
    counts = ctx.plan.count()
    assert counts["chunk"] == 2 and counts["rerank"] == 2 and counts["assemble"] == 4
    for stage in ("chunk", "label", "retrieve:bm25", "rerank"):  # the budget cells reuse these
        assert keys["context.budget=40"][stage] == keys["baseline"][stage]
        assert keys[CELLS[3]][stage] == keys["chunking.size=96"][stage]
    assert keys[CELLS[3]]["chunk"] != keys["baseline"]["chunk"]


def test_variants_json_and_manifest_record_the_design(sweep):
    _, out, _ = sweep
    records = {r["name"]: r for r in json.loads((out / "variants.json").read_text())}
    assert records["baseline"]["factors"] == {"chunking.size": "48", "context.budget": "128"}
    assert records[CELLS[3]]["factors"] == {"chunking.size": "96", "context.budget": "40"}
    man = json.loads((out / "manifest.json").read_text())
    assert man["design"] == {"kind": "factorial", "fraction": "full",
                             "variables": {"chunking.size": ["48", "96"],
                                           "context.budget": ["128", "40"]},
                             "cells": CELLS}


def test_factorial_parquet_holds_the_effects(sweep):
    _, out, _ = sweep
    effects = pl.read_parquet(out / "factorial.parquet")
    per_query = pl.read_parquet(out / "per_query.parquet")
    stats = pl.read_parquet(out / "stats.parquet")
    assert set(stats["variant"]) == set(CELLS[1:])   # the comparisons with the baseline stay
    for col in ("effect", "metric", "estimate", "ci_low", "ci_high", "p_value", "p_adjusted",
                "significant", "n"):
        assert col in effects.columns
    f1 = effects.filter(pl.col("metric") == "answer/f1")
    assert f1["effect"].to_list() == ["chunking.size=96", "context.budget=40", CELLS[3]]
    assert set(f1["family_size"]) == {3}
    # the interaction is the difference of differences of the cells' means
    mean = {r["variant"]: r["answer/f1"] for r in
            per_query.group_by("variant").agg(pl.col("answer/f1").mean()).iter_rows(named=True)}
    expect = mean[CELLS[3]] - mean["chunking.size=96"] - mean["context.budget=40"] + mean["baseline"]
    assert abs(expect) > 0.001   # the fixture has an interaction: the check can fail
    assert f1.row(2, named=True)["estimate"] == pytest.approx(expect, abs=1e-12)
    recall = effects.filter(pl.col("metric") == "final/recall_at_5").row(0, named=True)
    assert recall["n"] == per_query.filter((pl.col("variant") == "baseline")
                                           & pl.col("final/recall_at_5").is_not_nan()).height
    assert recall["n_excluded"] > 0   # unanswerable questions: no retrieval score


def test_report_shows_the_interaction_section_and_plot(sweep):
    _, out, _ = sweep
    report = (out / "report.md").read_text()
    assert "## Factorial: interactions" in report
    section = report.split("## Factorial: interactions")[1].split("\n## ")[0]
    assert "plots/interaction_chunking_size__context_budget.svg" in section
    assert "### final/recall_at_5" in section and "### answer/f1" in section
    assert f"| {CELLS[3]} | interaction |" in section
    svg = out / "plots" / "interaction_chunking_size__context_budget.svg"
    assert svg.is_file() and svg.read_bytes()[:5] == b"<?xml"
    html = (out / "report.html").read_text()
    assert "Factorial: interactions" in html and 'src="plots/interaction_' not in html  # embedded


def test_report_rebuilt_from_the_folder_has_the_section(sweep):
    from ablate.components.report.build import build_report
    from ablate.components.report.sweep_data import load_sweep
    _, out, _ = sweep
    res = load_sweep(out)
    assert res.factorial is not None and res.factorial.height
    files = build_report(res)
    assert files["report.md"] == (out / "report.md").read_text()
    assert "plots/interaction_chunking_size__context_budget.svg" in files


def test_the_combined_cell_section_labels_the_baseline(sweep):
    _, out, _ = sweep
    report = (out / "report.md").read_text()
    section = report.split("## chunking.size × context.budget")[1].split("\n## ")[0]
    assert "| baseline | chunking.size=48 × context.budget=128 |" in section


def test_a_cell_has_one_name_in_findings_overview_and_heading(sweep):
    """Issue 54: the cell was `a=1 × b=2` in the findings, `a:1,b:2` in the overview and
    `a+b` in its heading; now its label is its name and its heading the same fields."""
    import json
    _, out, _ = sweep
    cell = next(v for v in json.loads((out / "variants.json").read_text())
                if " × " in v["name"])
    assert cell["value_label"] == cell["name"] == "chunking.size=96 × context.budget=40"
    assert cell["variable"] == "chunking.size × context.budget"
    report = (out / "report.md").read_text()
    assert "chunking.size+context.budget" not in report and "chunking.size:96" not in report


def test_check_prints_the_design(sweep):
    from ablate.flows.cli.check import plan_lines
    ctx, out, _ = sweep
    lines = plan_lines(ctx, out.parent)
    assert ("design:    factorial 2 × 2 (full) over chunking.size, context.budget: 4 cells, "
            "the baseline one of them") in lines
