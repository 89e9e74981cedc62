"""`ablate trend`'s pure part (components/report/trend.py, trend_text.py, trend_svg.py) on
hand-made sweep folders (trend_runs.py): three runs of one experiment, the third's
baseline recall lowered; consecutive runs compared paired on their common questions over
clusters; a run on another question set says how many questions it shares; Chinese
question ids, clusters and experiment name; the page and its SVG self-contained."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ablate.components.contract.errors import InputError
from ablate.components.report.sweep_data import load_sweep
from ablate.components.report.trend import TrendRun, run_folders, trend_table
from ablate.components.report.trend_svg import trend_page, trend_svg
from ablate.components.report.trend_text import trend_text
from tests.components.report.diff_folders import VARIANT
from tests.components.report.html_check import check_html
from tests.components.report.trend_runs import CREATED, questions, series

RECALL = "final/recall_at_5"
ROOT = Path(__file__).resolve().parents[3]


def _runs(folders):
    return [TrendRun(str(f), load_sweep(f)) for f in folders]


def test_three_runs_third_drops(tmp_path):
    folders = series(tmp_path)
    table = trend_table(_runs(reversed(folders)))  # ordered by the manifests' `created`
    assert table["metric"].unique(maintain_order=True).to_list() == [RECALL, "answer/f1"]
    r = table.filter(metric=RECALL)
    assert r["run"].to_list() == [1, 2, 3]
    assert r["created"].to_list() == list(CREATED)
    assert r["label"].to_list() == [str(f) for f in folders]
    assert r["variant"].unique().to_list() == ["baseline"]
    assert r["n"].to_list() == [30, 30, 30] and r["clusters"].to_list() == [10, 10, 10]
    for mean, low, high in zip(r["mean"], r["ci_low"], r["ci_high"]):
        assert low < mean < high
    assert r["mean"][2] < r["mean"][1] - 0.2
    assert r["shared"].to_list() == [None, 30, 30]
    assert r["delta"][0] is None and r["verdict"][0] is None
    assert abs(r["delta"][1]) < 1e-12 and r["verdict"][1] == "not significant"
    assert r["delta"][2] < -0.2 and r["significant"][2] and r["verdict"][2] == "worse"
    assert r["delta_ci_high"][2] < 0 and r["n_clusters"][2] == 10 and r["n_used"][2] == 30
    f1 = table.filter(metric="answer/f1")
    assert f1["verdict"].to_list() == [None, "not significant", "not significant"]
    text = trend_text(table)
    assert "WORSE" in text and "30 questions in 10 clusters" in text


def test_paired_on_common_questions(tmp_path):
    qs = questions()
    third = {q: v for q, v in qs.items() if q >= "q10"}
    third.update({f"q{i}": {"question": f"new {i}", "answers": ["Paris"], "doc": 1}
                  for i in range(30, 35)})
    folders = series(tmp_path, questions=third)
    r = trend_table(_runs(folders), metrics=[RECALL])
    assert r["shared"].to_list() == [None, 30, 20]
    assert r["only_previous"].to_list() == [None, 0, 10]
    assert r["only_current"].to_list() == [None, 0, 5]
    assert r["n_used"][2] == 20 and r["n"][2] == 25
    assert r["verdict"][2] == "worse"
    text = trend_text(r)
    assert "20 shared (10 only in run 2, 5 only in run 3)" in text


def test_chinese_runs_and_page(tmp_path):
    folders = series(tmp_path, chinese=True, experiment="夜间评测")
    assert run_folders(tmp_path, "夜间评测") == sorted(folders)
    assert run_folders(tmp_path, "other") == []
    table = trend_table(_runs(folders))
    r = table.filter(metric=RECALL)
    assert r["clusters"].to_list() == [10, 10, 10] and r["verdict"][2] == "worse"
    page = trend_page(table, "夜间评测")
    assert page == trend_page(table, "夜间评测")  # the same bytes for the same table
    assert "<title>ablate trend: 夜间评测</title>" in page
    assert "<script" not in page and "http" not in page.replace(
        "http://www.w3.org/2000/svg", "")  # nothing to fetch
    assert check_html().static_problems(page) == []  # self-contained, images embedded SVG
    assert len(check_html().IMG_SRC.findall(page)) == 2  # a plot per metric
    svg = trend_svg(table.filter(metric=RECALL))
    assert svg.startswith('<?xml version="1.0" encoding="utf-8"?>\n<svg') and svg.count("<circle") == 3
    assert 'class="worse"' in svg and svg.count('class="worse"') == 1
    assert "<script" not in svg and "href" not in svg


def test_variant_and_bad_input(tmp_path):
    runs = _runs(series(tmp_path))
    r = trend_table(runs, variant=VARIANT, metrics=[RECALL])
    assert r["variant"].unique().to_list() == [VARIANT] and r["verdict"][2] == "not significant"
    with pytest.raises(InputError, match="no variant 'nope'") as e:
        trend_table(runs, variant="nope")
    assert e.value.field == "--variant"
    with pytest.raises(InputError, match="unknown metric 'final/recall_at_6'.*did you mean") as e:
        trend_table(runs, metrics=["final/recall_at_6"])
    assert e.value.field == "--metric"
    with pytest.raises(InputError, match="no runs"):
        trend_table([])


def test_one_run_has_no_step(tmp_path):
    table = trend_table(_runs(series(tmp_path)[:1]), metrics=[RECALL])
    assert table.height == 1 and table["delta"][0] is None
    assert math.isfinite(table["mean"][0])


def test_links_that_lead_nowhere_are_named(tmp_path):
    """Issue 55.6: the pages' links resolve: an anchor the page has, a file beside it."""
    (tmp_path / "plots").mkdir()
    (tmp_path / "plots" / "a.svg").write_text("<svg/>", encoding="utf-8")
    page = ('<h2 id="overview">O</h2><a name="legacy"></a><a href="#overview">ok</a>'
            '<a href="#legacy">ok</a><a href="plots/a.svg">ok</a><a href="https://x.org">ext</a>'
            '<a href="#findings">bad</a><a href="per_query.parquet">bad</a>')
    assert check_html().link_problems(page, tmp_path) == [
        "link to a missing anchor: #findings", "link to a missing file: per_query.parquet"]
    assert check_html().link_problems(page, None) == ["link to a missing anchor: #findings"]
