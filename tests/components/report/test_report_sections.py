"""Per-variable report sections show only what the variable can change (from stage keys
and metric declarations), with latency per stage and end to end."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest

from ablate.components.contract.config import PipelineConfig
from ablate.components.report.latency import latency_table
from ablate.components.report.markdown import render_markdown
from ablate.components.report.plots import latency_means
from ablate.components.report.relevance import can_change, section_metrics
from ablate.components.stats import compare_variants

N = 24
KEY = ["final/recall_at_5", "answer/f1"]
BASE_KEYS = {"chunk": "c1", "label": "l1", "retrieve:bm25": "r1", "fuse": "f1", "rerank": "k1",
             "assemble": "a1", "generate": "g1", "score": "s1"}


def _record(name, variable, value, keys, **config):
    cfg = PipelineConfig().model_dump(mode="json")
    for dotted, v in config.items():
        section, field = dotted.split("__")
        cfg[section][field] = v
    return {"name": name, "variable": variable, "value": value,
            "value_label": "" if value is None else str(value), "config": cfg,
            "stage_keys": {**BASE_KEYS, **keys}}


VARIANTS = [
    _record("baseline", None, None, {}),
    # closed book: only the generate stage (and scoring) differs
    _record("generator.name=closed_book", "generator.name", "closed_book",
            {"generate": "g2", "score": "s2"}, generator__name="closed_book"),
    # chunk size: everything from the chunks on differs
    _record("chunking.size=64", "chunking.size", 64,
            {"chunk": "c2", "label": "l2", "retrieve:bm25": "r2", "fuse": "f2", "rerank": "k2",
             "assemble": "a2", "generate": "g3", "score": "s3"}, chunking__size=64),
    # a price: no pipeline stage changes, only the score stage's own read
    _record("generator.cost_per_1k_in=0.5", "generator.cost_per_1k_in", 0.5,
            {"score": "s4"}, generator__cost_per_1k_in=0.5),
]


def _frames():
    rng = np.random.default_rng(3)
    qids = [f"q{i:02d}" for i in range(N)]
    rows, times = [], []
    for v in VARIANTS:
        rows.append(pl.DataFrame({
            "variant": v["name"], "qid": qids, "answerable": [True] * N,
            "bucket": ["ok"] * N, "final/recall_at_5": rng.uniform(0, 1, N),
            "answer/f1": rng.uniform(0, 1, N), "answer/refused": rng.integers(0, 2, N) * 1.0,
            "tokens/in": rng.uniform(100, 200, N), "cost/usd": rng.uniform(0, 1, N)}))
        gen = np.full(N, math.nan) if v["name"] == "baseline" else np.full(N, 0.5)
        times.append(pl.DataFrame({"variant": v["name"], "qid": qids,
                                   "latency/chunk": np.full(N, 0.01),
                                   "latency/retrieve_bm25": np.full(N, 0.02),
                                   "latency/generate": gen}))
    per_query = pl.concat(rows)
    metrics = KEY + ["answer/refused", "tokens/in", "cost/usd"]
    stats = compare_variants(per_query, baseline="baseline", metrics=metrics, seed=1,
                             test="permutation", correction="holm", alpha=0.05, resamples=200,
                             bootstrap_resamples=200, ci_method="percentile", family="per_metric")
    return per_query, pl.concat(times), stats


@pytest.fixture(scope="module")
def report():
    per_query, timings, stats = _frames()
    man = {"experiment": "sections", "statistics": {}, "questions": {}, "dataset": {}}
    return render_markdown(man, json.loads(json.dumps(VARIANTS)), stats, per_query, KEY,
                           timings=timings)


def _section(md: str, variable: str) -> str:
    start = md.index(f"\n## {variable}\n")
    end = md.find("\n## ", start + 5)
    return md[start:end]


def _tables(section: str) -> list[str]:
    """The metric of each variant table in a section, in order."""
    return [line.split(" | ")[2] for line in section.splitlines()
            if line.startswith("| variant | value | ")]


def test_generator_section_shows_answers_refusal_tokens_cost_not_retrieval(report):
    sec = _section(report, "generator.name")
    assert _tables(sec) == ["answer/f1", "answer/refused", "tokens/in", "cost/usd"]
    note = next(line for line in sec.splitlines() if line.startswith("Not affected by generator.name"))
    assert note.endswith(": final/recall_at_5.")


def test_retrieval_sweep_shows_retrieval_first_then_answers(report):
    assert _tables(_section(report, "chunking.size"))[:2] == ["final/recall_at_5", "answer/f1"]


def test_a_price_changes_only_cost(report):
    sec = _section(report, "generator.cost_per_1k_in")
    assert _tables(sec) == ["cost/usd"]
    assert "final/recall_at_5, answer/f1" in sec


def test_overview_marks_what_a_variant_cannot_change(report):
    row = next(line for line in report.splitlines()
               if line.startswith("| generator.name | closed_book |"))
    # recall cannot change, and closed book reads no context: not used (issue 54); the
    # answer can change
    assert row.count("not used") == 1 and "not affected" not in row
    chunk_row = next(line for line in report.splitlines() if line.startswith("| chunking.size | 64 |"))
    assert "not affected" not in chunk_row


def test_section_latency_names_changed_stages_and_end_to_end(report):
    sec = _section(report, "generator.name")
    header = next(line for line in sec.splitlines() if line.startswith("| variant | generate p50"))
    assert "chunk p50" not in header and "end-to-end p50 / p95 ms" in header
    sec = _section(report, "chunking.size")
    assert any(line.startswith("| variant | chunk p50 / p95 ms | retrieve_bm25 p50 / p95 ms | "
                               "generate p50") for line in sec.splitlines())


def test_end_to_end_latency_sums_each_questions_stages():
    t = pl.DataFrame({"variant": ["a"] * 4 + ["b"] * 2, "qid": ["1", "2", "3", "4", "1", "2"],
                      "latency/x": [0.1, 0.2, 0.3, 0.4, math.nan, math.nan],
                      "latency/y": [1.0, 1.0, 1.0, 2.0, 0.5, 0.7]})
    table = latency_table(t).splitlines()
    assert table[0] == "| variant | x p50 / p95 ms | y p50 / p95 ms | end-to-end p50 / p95 ms |"
    # a: totals 1.1, 1.2, 1.3, 2.4 s -> p50 1250 ms, p95 2235 ms (linear)
    assert table[2] == "| a | 250.0 / 385.0 | 1000.0 / 1850.0 | 1250.0 / 2235.0 |"
    # b never ran x: its end to end is y alone
    assert table[3] == "| b | – | 600.0 / 690.0 | 600.0 / 690.0 |"


def test_reused_latencies_are_marked():
    """timings.parquet's reused/<stage> (latency recorded when the result was computed,
    not timed by this run) marks the cells it holds, with one footnote."""
    t = pl.DataFrame({"variant": ["a", "a", "b", "b"], "qid": ["1", "2", "1", "2"],
                      "latency/x": [0.1, 0.2, 0.1, 0.2], "reused/x": [False, False, True, False],
                      "latency/y": [1.0, 1.0, 1.0, 1.0], "reused/y": [False] * 4})
    table = latency_table(t).splitlines()
    assert table[2] == "| a | 150.0 / 195.0 | 1000.0 / 1000.0 | 1150.0 / 1195.0 |"
    assert table[3] == "| b | 150.0 / 195.0 ↺ | 1000.0 / 1000.0 | 1150.0 / 1195.0 ↺ |"
    assert table[-1].startswith("↺ recorded when the result was computed")
    assert "↺" not in latency_table(t.filter(pl.col("variant") == "a"))


def test_latency_chart_keeps_a_variant_with_an_untimed_stage():
    t = pl.DataFrame({"variant": ["ext", "ext"], "qid": ["1", "2"],
                      "latency/generate": [math.nan, math.nan], "latency/fuse": [0.2, 0.4]})
    assert latency_means(t, ["latency/generate", "latency/fuse"], ["ext"]) == {"ext": [0.0, pytest.approx(0.3)]}


def test_records_without_stage_keys_show_every_key_metric():
    old = [dict(v, stage_keys=None) for v in VARIANTS]
    records = {v["name"]: v for v in old}
    shown, hidden = section_metrics(["generator.name=closed_book"], records, KEY, KEY, "baseline")
    assert shown == KEY and hidden == []
    assert can_change("final/recall_at_5", VARIANTS[2], VARIANTS[0])
    assert not can_change("final/recall_at_5", VARIANTS[1], VARIANTS[0])
    assert can_change("latency/retrieve_bm25", VARIANTS[2], VARIANTS[0])
    assert not can_change("latency/retrieve_bm25", VARIANTS[1], VARIANTS[0])


def test_long_value_labels_are_wrapped_for_the_plot():
    from ablate.components.report.plots import tick_labels
    labels = tick_labels(["{cross_encoder: 0.6, fusion: 0.3, source: 0.1}", "60"])
    assert labels[1] == "60"
    assert all(len(line) <= 16 for line in labels[0].splitlines()) and labels[0].count("\n") >= 2


def test_an_extra_figure_that_never_varies_is_left_out():
    per_query, timings, stats = _frames()
    per_query = per_query.with_columns(pl.lit(0.0).alias("cost/usd"))  # zero prices
    man = {"experiment": "sections", "statistics": {}, "questions": {}, "dataset": {}}
    md = render_markdown(man, json.loads(json.dumps(VARIANTS)), stats, per_query, KEY,
                         timings=timings)
    assert _tables(_section(md, "generator.name")) == ["answer/f1", "answer/refused", "tokens/in"]
