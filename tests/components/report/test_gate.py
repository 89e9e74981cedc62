"""The CI gate inside a synthetic sweep: non-inferiority by default (a variant passes only
when its drop is shown to be below the allowance; too small a sample is inconclusive, never
a pass), and the old 'significantly worse' rule under its own name."""

from __future__ import annotations

import pytest

from ablate.components.contract.errors import InputError
from ablate.components.report.gate import check_gate, explain
from ablate.components.report.sweep_data import load_sweep
from tests.components.report.synthetic import STATS, make_sweep

RECALL = "final/recall_at_5"
FLAT = {**STATS, "cluster": "none"}  # every question its own cluster: 24 defined questions


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    return load_sweep(make_sweep(tmp_path_factory.mktemp("gate")))


def _gate(sweep, metrics=RECALL, max_drop=0.02, statistics=FLAT, **kw):
    return {r.variant: r for r in check_gate(sweep.per_query, metrics, max_drop,
                                              statistics=statistics, seed=3, stats=sweep.stats,
                                              **kw)}


def test_a_drop_fails_and_an_unchanged_variant_passes(sweep):
    res = _gate(sweep)
    worse, same = res["chunking.size=64"], res["fusion.rrf_k=10"]
    assert worse.verdict == "fail" and worse.failed and worse.delta == pytest.approx(-0.3, abs=0.01)
    assert same.verdict == "pass" and not same.failed and same.n == 24 and same.n_clusters == 24
    assert "the drop is larger than 0.02" in explain(worse, 0.02)
    line = explain(same, 0.02)
    assert "drop <= 0.000 (97.5% one-sided bound)" in line
    assert "rules out drops >= 0.000 at 24 questions in 24 clusters" in line


def test_the_allowed_drop_decides(sweep):
    assert not any(r.failed for r in _gate(sweep, max_drop=0.5).values())
    assert _gate(sweep, max_drop=0.25)["chunking.size=64"].failed


def test_few_clusters_are_inconclusive_not_a_pass(sweep):
    """The synthetic questions share 5 documents: the sign-flip test over 5 clusters
    cannot bound anything at 0.05 / 2 one-sided, so even the unchanged variant is not passed."""
    res = _gate(sweep, statistics=STATS)  # stats.cluster missing: auto, the `cluster` column
    same = res["fusion.rrf_k=10"]
    assert same.verdict == "inconclusive" and same.n_clusters == 5
    assert "needs ~29 questions" in explain(same, 0.02)  # 6 clusters of the same sizes
    # one gated comparison: level 0.1, 5 clusters can bound it, and it passes
    only = _gate(sweep, statistics=STATS, variant="fusion.rrf_k=10")
    assert list(only) == ["fusion.rrf_k=10"] and only["fusion.rrf_k=10"].verdict == "pass"


def test_bonferroni_over_every_gated_metric_and_variant(sweep):
    res = check_gate(sweep.per_query, [RECALL, "answer/f1"], 0.02, statistics=FLAT, seed=3)
    assert [(r.metric, r.variant) for r in res] == [
        (RECALL, "chunking.size=64"), (RECALL, "fusion.rrf_k=10"),
        ("answer/f1", "chunking.size=64"), ("answer/f1", "fusion.rrf_k=10")]
    assert all(r.confidence == pytest.approx(1 - 0.05 / 4) for r in res)


def test_worse_rule_keeps_the_old_behaviour(sweep):
    res = _gate(sweep, max_drop=None, rule="worse")
    assert res["chunking.size=64"].failed and not res["fusion.rrf_k=10"].failed
    assert res["chunking.size=64"].significant
    assert not any(r.failed for r in _gate(sweep, max_drop=0.5, rule="worse").values())


def test_direction_comes_from_the_metric_registry(sweep):
    """A rise of a lower-is-better metric (cost) fails; a fall passes."""
    import polars as pl
    pq = sweep.per_query
    rise = pq.with_columns(pl.col(RECALL).mul(-1).alias("cost/usd"))
    res = check_gate(rise, "cost/usd", 0.02, statistics=FLAT)
    assert {r.variant for r in res if r.failed} == {"chunking.size=64"}
    assert res[0].delta == pytest.approx(0.3, abs=0.01)  # in the metric's own sign
    fall = pq.with_columns(pl.col(RECALL).alias("cost/usd"))
    assert not any(r.failed for r in check_gate(fall, "cost/usd", 0.02, statistics=FLAT))
    with pytest.raises(InputError, match="no better direction"):
        check_gate(pq.with_columns(pl.col(RECALL).alias("answer/refused")), "answer/refused", 0.02)


@pytest.mark.parametrize("kwargs, field, message", [
    ({"metrics": "nope"}, "--metric", "unknown metric"),
    ({"metrics": "answer/f1", "variant": "x"}, "--variant", "unknown variant"),
    ({"metrics": "answer/f1", "max_drop": -1}, "--max-drop", ">= 0"),
    ({"metrics": "answer/f1", "max_drop": 0.0}, "--max-drop", "can never be proven"),
    ({"metrics": "answer/f1", "max_drop": None}, "--max-drop", "needs the allowed drop"),
    ({"metrics": "answer/f1", "rule": "sometimes"}, "--rule", "unknown rule"),
])
def test_bad_arguments(sweep, kwargs, field, message):
    kwargs = {"max_drop": 0.02, **kwargs}
    with pytest.raises(InputError, match=message) as err:
        check_gate(sweep.per_query, stats=sweep.stats, **kwargs)
    assert err.value.field == field


def test_an_inconclusive_gate_says_when_the_data_set_cannot_prove_the_margin():
    """Issue 54: "needs ~1172 questions" for a 0.065 drop, more than the whole dev split,
    and nothing said so. With the sweep's manifest the line says how many the data set
    has for the metric and the smallest drop all of them could prove."""
    import math

    from ablate.components.report.gate import GateResult
    r = GateResult(RECALL, "v", "non-inferiority", "inconclusive", -0.01, 200, 40,
                   lower=-0.2, upper=0.1, margin_n=0.157, needed_n=1172.0, confidence=0.975)
    man = {"questions": {"total": 250, "selection": [{"step": "data set", "questions": 700},
                                                     {"step": "split dev", "questions": 600},
                                                     {"step": "tier smoke", "questions": 250}]}}
    line = explain(r, 0.065, manifest=man)
    have = 600 * 200 / 250  # the split's questions that define recall, pro rata: 480
    best = 0.157 * math.sqrt(200 / have)
    assert (f"needs ~1172 questions (more clusters of the same sizes), more than the ~480 "
            f"this data set has for {RECALL}: with all of them the smallest drop it could "
            f"prove is about {best:.3f}") in line
    assert "(the smallest drop it can prove at this n)" in line
    big = {"questions": {"total": 250, "selection": [{"step": "split dev", "questions": 5000}]}}
    assert "this data set has" not in explain(r, 0.065, manifest=big)
    assert "this data set has" not in explain(r, 0.065)  # no manifest: nothing to say
