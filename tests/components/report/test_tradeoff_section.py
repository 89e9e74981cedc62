"""The report's trade-off section on the synthetic sweep: the front of the primary key
metric against P95 end-to-end latency (and cost when priced), what dominates each other
variant, the plot, and the sentence on a faster variant that is not significantly worse."""

from __future__ import annotations

import base64

import numpy as np
import polars as pl
import pytest

from ablate.components.report.build import build_report
from ablate.components.report.html import render_html
from ablate.components.report.sweep_data import load_sweep
from ablate.components.report.tradeoff import Point
from ablate.components.report.tradeoff_report import (
    FRONT,
    Front,
    front_of,
    tradeoff_section,
)
from tests.components.report.synthetic import N, make_sweep

HEAD = "## Quality, latency and cost"
LATENCY = {"baseline": 0.010, "chunking.size=64": 0.012, "fusion.rrf_k=10": 0.005}


def _sweep(folder, cost: dict[str, float] | None = None):
    make_sweep(folder)
    t = pl.read_parquet(folder / "timings.parquet")
    t = t.with_columns(pl.col("variant").replace_strict(LATENCY, return_dtype=pl.Float64)
                       .alias("latency/generate"))
    t.write_parquet(folder / "timings.parquet")
    if cost is not None:
        q = pl.read_parquet(folder / "per_query.parquet")
        q.with_columns(pl.col("variant").replace_strict(cost, default=None, return_dtype=pl.Float64)
                       .alias("cost/usd")).write_parquet(folder / "per_query.parquet")
    return folder


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return build_report(load_sweep(_sweep(tmp_path_factory.mktemp("front") / "sweep")))


def test_section_names_the_front_and_what_dominates_the_rest(files):
    md = files["report.md"]
    assert HEAD in md
    assert md.index("## Overview") < md.index(HEAD) < md.index("## Findings")
    section = md[md.index(HEAD):md.index("## Findings")]
    # rrf_k=10 recalls exactly what the baseline does, faster; chunk 64 recalls less, slower
    assert "Pareto-optimal on final/recall_at_5 and P95 end-to-end latency: fusion.rrf_k=10." \
        in section
    assert "| baseline |" in section and "dominated by fusion.rrf_k=10 |" in section
    assert "| chunking.size=64 |" in section
    assert "dominated by baseline, fusion.rrf_k=10 |" in section
    assert "5.0 |" in section and "10.0 |" in section  # P95 in ms
    # nothing priced: the front is drawn on latency alone, and the section says so
    assert "No variant has a cost per question" in section
    # the callout: faster than the baseline and not significantly worse
    assert "**fusion.rrf_k=10** is faster than the baseline (P95 end to end 5.0 vs 10.0 ms)" \
        in section
    assert "not significantly worse on any key quality metric" in section
    assert "**chunking.size=64** is" not in section


def test_plot_drawn_and_embedded(files):
    svg = files[f"plots/{FRONT}"]
    assert svg.startswith(b"<?xml") and b"fusion.rrf_k=10" in svg
    assert f"](plots/{FRONT})" in files["report.md"]
    assert base64.b64encode(svg).decode("ascii")[:200] in files["report.html"]
    assert "<h2>Quality, latency and cost</h2>" in files["report.html"]


def test_cost_front_and_a_variant_without_cost(tmp_path):
    res = load_sweep(_sweep(tmp_path / "sweep", cost={"baseline": 0.004, "chunking.size=64": 0.001}))
    md = build_report(res, plots=False)["report.md"]
    section = md[md.index(HEAD):md.index("## Findings")]
    assert "Pareto-optimal on final/recall_at_5 and cost per question: baseline, chunking.size=64." \
        in section
    assert "No cost per question for fusion.rrf_k=10" in section
    assert "| baseline |" in section and "0.004" in section


def test_one_variant_or_no_quality_metric_has_no_section():
    one = Front("final/recall_at_5", False, [Point("baseline", 0.5, latency=0.01)])
    assert tradeoff_section(one, [], []) == []
    q = pl.DataFrame({"variant": ["baseline"] * N, "qid": [str(i) for i in range(N)],
                      "tokens/in": np.ones(N)})
    assert front_of(q, pl.DataFrame(), None, [], ["tokens/in"], {}) is None


def test_chinese_variant_names_render():
    pts = [Point("baseline", 0.5, latency=0.01), Point("generator.prompt=中文提示", 0.6, latency=0.02)]
    lines = tradeoff_section(Front("answer/f1", False, pts), [], [])
    text = "\n".join(lines)
    assert "Pareto-optimal on answer/f1 and P95 end-to-end latency: baseline, generator.prompt=中文提示." \
        in text
    assert "<td>generator.prompt=中文提示</td>" in render_html(text, "报告")
