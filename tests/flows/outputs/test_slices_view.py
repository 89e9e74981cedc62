"""Slices are a view (issue 54, item 6): `report.slices` tests the key metrics per slice in
families of their own (per key metric and slice column), so asking for slices never
changes a main comparison; a metric no question of a slice defines says so."""

from __future__ import annotations

from types import SimpleNamespace

import polars as pl

from ablate.components.stats.slices import take
from ablate.flows.outputs.analysis import compute_stats
from tests.components.stats.test_slices import _per_query


def _ctx(slices: list[str], family: str = "per_metric") -> SimpleNamespace:
    stats = SimpleNamespace(cluster="cluster", alpha=0.05, test="permutation", correction="holm",
                            resamples=2000, bootstrap_resamples=200, ci_method="inversion",
                            family=family)
    spec = SimpleNamespace(stats=stats, seed=0, report=SimpleNamespace(slices=slices),
                           metrics=SimpleNamespace(key=["answer/f1", "final/recall_at_5"]))
    return SimpleNamespace(spec=spec, labels=None)


def test_main_statistics_are_identical_with_and_without_slices():
    pq = _per_query()
    for family in ("per_metric", "all"):
        plain, none = take(compute_stats(_ctx([], family), pq))
        main, sliced = take(compute_stats(_ctx(["type"], family), pq))
        assert none is None and sliced is not None
        assert main.sort("metric", "variant").equals(plain.sort("metric", "variant")), family
        # the slices' own families: per_metric, answer/f1 on `type` (its 2 testable
        # values x 2 variants); all: every key metric on `type`
        tested = sliced.filter(pl.col("note").is_null())
        assert set(tested["family_size"].to_list()) == {4 if family == "per_metric" else 8}


def test_a_metric_no_question_of_a_slice_defines_is_undefined_not_too_few():
    pq = _per_query().with_columns(
        pl.when(pl.col("type") == "span").then(float("nan"))
        .otherwise(pl.col("final/recall_at_5")).alias("final/recall_at_5"))
    from ablate.components.stats.slices import UNDEFINED
    _, sliced = take(compute_stats(_ctx(["type"]), pq))
    span = sliced.filter((pl.col("slice") == "type=span")
                         & (pl.col("metric") == "final/recall_at_5"))
    assert span.height == 2 and all(UNDEFINED in n for n in span["note"].to_list())
