"""The trade-off front on hand-made tables: dominance, ties, a lower-is-better metric,
missing latency or cost, one variant; P95 end-to-end latency and cost per question from
the tables a run writes."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from ablate.components.report.tradeoff import (
    COST,
    LATENCY,
    Point,
    cost_per_question,
    dominated_by,
    p95_latency,
    pareto_front,
    qualities,
)


def test_dominance_and_front():
    pts = [Point("a", 0.8, latency=1.0), Point("b", 0.7, latency=2.0), Point("c", 0.9, latency=3.0),
           Point("d", 0.6, latency=3.0)]
    assert dominated_by(pts, LATENCY) == {"a": [], "b": ["a"], "c": [], "d": ["a", "b", "c"]}
    assert pareto_front(pts, LATENCY) == ["a", "c"]


def test_ties_dominate_nobody_and_equal_quality_at_more_spend_is_dominated():
    pts = [Point("a", 0.8, latency=1.0), Point("b", 0.8, latency=1.0), Point("c", 0.8, latency=2.0),
           Point("d", 0.9, latency=1.0)]
    got = dominated_by(pts, LATENCY)
    # d: as fast as a and b and better: it dominates them; a and b tie, neither dominates
    assert got == {"a": ["d"], "b": ["d"], "c": ["a", "b", "d"], "d": []}
    assert pareto_front([Point("a", 0.8, latency=1.0), Point("b", 0.8, latency=1.0)], LATENCY) \
        == ["a", "b"]


def test_lower_is_better_quality():
    pts = [Point("a", 0.1, cost=1.0), Point("b", 0.3, cost=1.0)]
    assert dominated_by(pts, COST, lower_better=True) == {"a": [], "b": ["a"]}
    assert dominated_by(pts, COST) == {"a": ["b"], "b": []}


def test_missing_axis_or_quality_is_not_placed():
    pts = [Point("a", 0.8, latency=1.0, cost=0.002), Point("b", 0.9, latency=2.0),
           Point("c", math.nan, latency=0.5, cost=0.001)]
    assert dominated_by(pts, LATENCY) == {"a": [], "b": []}
    assert dominated_by(pts, COST) == {"a": []}   # b has no cost, c no quality
    assert pareto_front(pts, COST) == ["a"]


def test_one_variant_is_its_own_front():
    assert dominated_by([Point("baseline", 0.5, latency=1.0)], LATENCY) == {"baseline": []}
    assert pareto_front([], LATENCY) == []


def test_p95_end_to_end_latency():
    n = 20
    t = pl.DataFrame({"variant": ["a"] * n + ["b"] * n,
                      "qid": [f"q{i}" for i in range(n)] * 2,
                      "latency/retrieve_bm25": np.r_[np.arange(n) * 0.01, np.full(n, np.nan)],
                      "latency/generate": np.r_[np.full(n, 0.1), np.full(n, np.nan)]})
    got = p95_latency(t)
    # per question the sum of its stages, then the linear 95th percentile (as the latency table)
    assert got["a"] == pytest.approx(float(np.percentile(np.arange(n) * 0.01 + 0.1, 95)))
    assert "b" not in got  # no stage timed
    assert p95_latency(None) == {}


def test_cost_per_question_only_when_something_is_priced():
    q = pl.DataFrame({"variant": ["a", "a", "b", "b", "c"], "qid": ["1", "2", "1", "2", "1"],
                      "cost/usd": [0.002, 0.004, 0.0, 0.0, float("nan")]})
    assert cost_per_question(q) == {"a": pytest.approx(0.003), "b": 0.0}  # c: no priced answer
    assert cost_per_question(q.with_columns(pl.lit(0.0).alias("cost/usd"))) == {}  # all prices 0
    assert cost_per_question(q.drop("cost/usd")) == {}


def test_qualities_of_a_nested_sample_are_moved_by_the_paired_delta():
    q = pl.DataFrame({"variant": ["baseline"] * 4 + ["v"] * 2 + ["w"] * 4,
                      "qid": ["1", "2", "3", "4", "1", "2", "1", "2", "3", "4"],
                      "m": [0.2, 0.4, 0.6, 0.8, 0.5, 0.5, 0.1, 0.1, 0.1, float("nan")]})
    stats = pl.DataFrame({"metric": ["m", "m"], "variant": ["v", "w"], "delta": [0.2, -0.3]})
    got = qualities(q, stats, "m", ["baseline", "v", "w"], nested={"v"})
    # v ran on 2 of the baseline's 4 questions: the baseline's mean (0.5) plus its Δ there
    assert got == {"baseline": pytest.approx(0.5), "v": pytest.approx(0.7), "w": pytest.approx(0.1)}
    assert "w" not in qualities(q, stats, "m", ["baseline", "v", "w"], hidden={("w", "m")})


def test_cost_per_question_reads_the_total_over_every_stage():
    """Issue 53.2: the front's cost is cost/total (serving: retrieval and generator), not
    the generator's cost/usd alone; a sweep recorded before cost/total still reads cost/usd."""
    q = pl.DataFrame({"variant": ["a", "a", "b"], "qid": ["1", "2", "1"],
                      "cost/usd": [0.002, 0.004, 0.001], "cost/total": [0.012, 0.014, 0.001]})
    assert cost_per_question(q) == {"a": pytest.approx(0.013), "b": pytest.approx(0.001)}
    unpriced = q.with_columns(pl.lit(0.0).alias("cost/total"), pl.lit(0.0).alias("cost/usd"))
    assert cost_per_question(unpriced) == {}
