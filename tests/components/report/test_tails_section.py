"""The report's Tails table: each variant's mean and P10 (the worst tenth of its questions)
on every key quality metric, in report.md and report.html, Chinese names included."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from ablate.components.report.build import build_report
from ablate.components.report.html import render_html
from ablate.components.report.numbers import fmt
from ablate.components.report.sweep_data import load_sweep
from ablate.components.report.tails import quality_metrics, tails_section
from ablate.components.stats.tails import worst_tenth_of
from tests.components.report.synthetic import make_sweep


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    return make_sweep(tmp_path_factory.mktemp("tails") / "sweep")


def test_quality_metrics_leave_out_tokens_cost_latency_and_no_direction():
    key = ["final/recall_at_5", "tokens/in", "cost/usd", "latency/generate",
           "final/context_tokens", "answer/f1", "refusal/false_acceptance"]
    assert quality_metrics(key) == ["final/recall_at_5", "answer/f1", "refusal/false_acceptance"]


def test_report_shows_mean_and_p10_of_every_variant(sweep):
    files = build_report(load_sweep(sweep), plots=False)
    md = files["report.md"]
    per_query = pl.read_parquet(sweep / "per_query.parquet")
    assert "## Tails: the worst tenth of questions" in md
    lines = md.splitlines()
    for name in ("baseline", "chunking.size=64", "fusion.rrf_k=10"):
        rows = per_query.filter(pl.col("variant") == name)
        cells = []
        for m in ("final/recall_at_5", "answer/f1"):
            x = rows[m].to_numpy()
            cells += [fmt(float(np.nanmean(x))), fmt(worst_tenth_of(x))]
        expected = f"| {name} | " + " | ".join(cells) + " |"
        assert expected in lines, expected
    # the tails come after the overview and the findings, before the per-variable sections
    assert md.index("## Findings") < md.index("## Tails") < md.index("## chunking.size")
    assert "<h2>Tails: the worst tenth of questions</h2>" in files["report.html"]


def test_lower_is_better_metric_and_chinese_names_render():
    n = 20
    per_query = pl.DataFrame({
        "variant": ["baseline"] * n + ["generator.prompt=中文提示"] * n,
        "qid": [f"q{i}" for i in range(n)] * 2,
        "answer/f1": np.r_[np.linspace(0, 1, n), np.linspace(0.5, 1, n)],
        "refusal/false_acceptance": np.r_[np.zeros(n - 2), np.ones(2), np.zeros(n)],
    })
    lines = tails_section(per_query, ["answer/f1", "refusal/false_acceptance"],
                          ["baseline", "generator.prompt=中文提示"])
    text = "\n".join(lines)
    # false acceptance is lower-is-better: its worst tenth is the top, 2 of 20 questions at 1
    assert "| baseline | 0.500 | 0.053 | 0.100 | 1.000 |" in lines
    assert "| generator.prompt=中文提示 | 0.750 | 0.526 | 0.000 | 0.000 |" in lines
    page = render_html(text, "报告")
    assert "<td>generator.prompt=中文提示</td>" in page and "<title>报告</title>" in page


def test_nothing_without_a_quality_metric_or_a_column():
    per_query = pl.DataFrame({"variant": ["baseline"], "qid": ["q"], "tokens/in": [3.0]})
    assert tails_section(per_query, ["tokens/in", "ppi/answer/f1"], ["baseline"]) == []
