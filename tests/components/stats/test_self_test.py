"""The sweep's self-test (ablate.components.stats.self_test): nulls from the sweep's own
differences, the configured test and the cluster t run on them."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from ablate.components.report.stats_caveats import off_level, self_test_text
from ablate.components.stats import paired_tests
from ablate.components.stats.self_test import self_test, signflip_null_pvalues
from ablate.components.stats.signflip import signflip_pvalues


def _table(seed: int = 0, g: int = 14, per: int = 6, shift: float = 0.08) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(g):
        effect = rng.normal(0, 0.1)
        for i in range(per):
            q = f"c{c}q{i}"
            base = float(np.clip(0.5 + effect + rng.normal(0, 0.2), 0, 1))
            rows.append({"variant": "baseline", "qid": q, "cluster": f"d{c}", "m/x": base})
            rows.append({"variant": "v", "qid": q, "cluster": f"d{c}",
                         "m/x": base + shift + effect * 0.5 + rng.normal(0, 0.05)})
    return pl.DataFrame(rows)


def _run(table: pl.DataFrame, **kw):
    args = dict(baseline="baseline", metrics=["m/x"], test="permutation", ci_method="inversion",
                alpha=0.05, bootstrap_resamples=999, seed=3, cluster_col="cluster")
    return self_test(table, **(args | kw))


def test_the_exact_null_pvalues_equal_the_sign_flip_tests_enumeration():
    rng = np.random.default_rng(1)
    a = rng.normal(size=12)
    a[3] = 0.0
    S = a[:, None] * rng.choice([-1.0, 1.0], size=(12, 60))
    p_fast = signflip_null_pvalues(S, seed=0)
    p_test, method = signflip_pvalues(S, resamples=10_000)
    assert set(method) == {"exact-enum"}
    np.testing.assert_array_equal(p_fast, p_test)


def test_self_test_reports_both_families_near_their_level_and_is_deterministic():
    t = _table()
    r = _run(t)
    assert r["comparisons"] == ["v on m/x"]
    fams = {f["family"]: f for f in r["families"]}
    assert set(fams) == {"permutation", "t"}
    for f in fams.values():
        assert f["nulls"] == 200 and f["alternatives"] == 50
        assert 0.0 <= f["type_i"] <= 0.12
        assert 0.85 <= f["coverage"] <= 1.0
        assert f["type_i_mc_se"] > 0
    assert fams["permutation"]["interval"] == "signflip-inversion"
    again = _run(t)
    assert again["families"] == r["families"]


def test_self_test_runs_the_configured_test_and_catches_one_off_its_level(monkeypatch):
    """A broken test that rejects every null is found off its level, and the report says
    so beside the verdicts; the same data with the real test is not."""
    def always(S, N, *, resamples, seed, alpha):
        return np.full(S.shape[1], 0.001), ["t"] * S.shape[1], np.zeros(S.shape[1], dtype=np.int64)
    monkeypatch.setitem(paired_tests.TESTS._items, "liberal", always)
    t = _table()
    bad = _run(t, test="liberal", ci_method="t")
    fam = {f["family"]: f for f in bad["families"]}["liberal"]
    assert fam["type_i"] == 1.0 and fam["off_level"]
    lines = off_level(bad, {"test": "liberal"})
    assert len(lines) == 1 and "liberal" in lines[0] and "every p-value" in lines[0]
    good = _run(t)
    assert not any(f["off_level"] for f in good["families"])
    assert off_level(good, {"test": "permutation"}) == []


def test_no_comparison_with_changes_in_two_clusters_simulates_nothing():
    t = _table(shift=0.0)
    same = pl.concat([t.filter(pl.col("variant") == "baseline"),
                      t.filter(pl.col("variant") == "baseline").with_columns(variant=pl.lit("v"))])
    r = _run(same)
    assert r["comparisons"] == [] and r["families"] == []
    assert "no comparison" in self_test_text(r)


def test_header_text_names_each_family_with_its_errors():
    r = _run(_table())
    text = self_test_text(r)
    assert "permutation: type-I" in text and "cluster t (CR2)" in text and "±" in text
    assert self_test_text(None) == ""
    assert self_test_text({"error": "ValueError: x"}).startswith("could not run")


@pytest.mark.parametrize("g", [6, 30])
def test_self_test_without_clusters_and_with_many_clusters(g):
    t = _table(g=g, per=3)
    r = _run(t, cluster_col=None)
    assert {f["family"] for f in r["families"]} == {"permutation", "t"}
