"""The CI gate decision on a synthetic sweep: significant drops beyond the allowance fail."""

from __future__ import annotations

import polars as pl
import pytest

from ablate.components.errors import InputError
from ablate.components.report.gate import check_gate
from tests.components.report.synthetic import make_sweep


@pytest.fixture(scope="module")
def stats(tmp_path_factory):
    return pl.read_parquet(make_sweep(tmp_path_factory.mktemp("gate")) / "stats.parquet")


def test_significant_drop_fails(stats):
    res = {r.variant: r for r in check_gate(stats, "final/recall_at_5")}
    assert res["chunking.size=64"].failed and not res["fusion.rrf_k=10"].failed


def test_allowed_drop_passes(stats):
    assert not any(r.failed for r in check_gate(stats, "final/recall_at_5", max_drop=0.5))
    assert any(r.failed for r in check_gate(stats, "final/recall_at_5", max_drop=0.25))


def test_named_variant_and_direction(stats):
    only = check_gate(stats, "final/recall_at_5", variant="fusion.rrf_k=10")
    assert [r.variant for r in only] == ["fusion.rrf_k=10"] and not only[0].failed



def test_direction_comes_from_the_metric_registry(stats):
    """A significant rise of a lower-is-better metric (cost) fails with no flag; a fall passes."""
    recall = stats.filter(pl.col("metric") == "final/recall_at_5")
    rise = recall.with_columns(metric=pl.lit("cost/usd"), delta=-pl.col("delta"))
    assert {r.variant for r in check_gate(rise, "cost/usd") if r.failed} == {"chunking.size=64"}
    fall = recall.with_columns(metric=pl.lit("cost/usd"))
    assert not any(r.failed for r in check_gate(fall, "cost/usd"))
    with pytest.raises(InputError, match="no better direction"):
        check_gate(recall.with_columns(metric=pl.lit("answer/refused")), "answer/refused")


@pytest.mark.parametrize("kwargs, field", [({"metric": "nope"}, "--metric"),
                                           ({"metric": "answer/f1", "variant": "x"}, "--variant"),
                                           ({"metric": "answer/f1", "max_drop": -1}, "--max-drop")])
def test_bad_arguments(stats, kwargs, field):
    with pytest.raises(InputError) as err:
        check_gate(stats, **kwargs)
    assert err.value.field == field
