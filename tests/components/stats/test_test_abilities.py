"""Paired tests declare their abilities (ablate.components.stats.abilities): a test
registered here, with a fake p-value function, takes the road it declares in the
inference, the self-test, the report and `ablate power`, never one chosen by its name."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from ablate.components.contract.registry import RegistrationError
from ablate.components.report.intervals import ci_text
from ablate.components.report.stats_caveats import cannot_reject, error_rates_text, self_test_text
from ablate.components.report.worth import _caveats
from ablate.components.stats import compare_variants
from ablate.components.stats.clusters import cluster_ttest
from ablate.components.stats.paired_tests import TESTS
from ablate.components.stats.self_test import self_test
from ablate.components.stats.signflip import signflip_pvalues
from tests.components.stats.test_self_test import _table as self_test_table

PLAIN = dict(inverts=None, smallest_p=None, self_test_p="own", power="t",
             assumption="the fake test assumes nothing at all", symmetric=False,
             also_called="", wilcoxon_column=False)


@pytest.fixture
def register(monkeypatch):
    """Register a paired test for one test (the registry restored afterwards)."""
    monkeypatch.setattr(TESTS, "_items", dict(TESTS._items))
    monkeypatch.setattr(TESTS, "_decls", dict(TESTS._decls))

    def reg(name, fn, **declared):
        TESTS.register(name, **(PLAIN | declared))(fn)
    return reg


def _t_p(S, N, *, resamples, seed, alpha):
    p = cluster_ttest(S, N, alpha)[1].copy()
    return p, ["fake"] * p.size, np.zeros(p.size, dtype=np.int64)


def _signflip_p(S, N, *, resamples, seed, alpha):
    p, _ = signflip_pvalues(S, resamples=resamples, seed=seed)
    return p, ["fake"] * p.size, np.zeros(p.size, dtype=np.int64)


def _never(S, N, *, resamples, seed, alpha):
    raise AssertionError("the self-test ran the test itself instead of its declared p")


def _table(g: int, per: int = 3, shift: float = 0.15, seed: int = 0) -> pl.DataFrame:
    return self_test_table(seed=seed, g=g, per=per, shift=shift)


def _compare(table, test, **kw):
    return compare_variants(table, baseline="baseline", metrics=["m/x"], test=test,
                            resamples=999, cluster_col="cluster", **kw)


def test_a_test_that_inverts_into_the_t_interval_gets_it(register):
    register("fake_t", _t_p, inverts="t")
    r = _compare(_table(12), "fake_t")
    assert r["ci_method"].to_list() == ["t-inversion"]
    t = _compare(_table(12), "t")
    assert r["ci_low"].to_list() == t["ci_low"].to_list()


def test_a_test_that_inverts_into_the_signflip_interval_decides_it_at_zero(register):
    """Declared `signflip`, its own decision fixes the interval at 0: the interval
    excludes 0 exactly when it is significant (a liberal fake: significant, though the
    sign-flip test's own p would not be)."""
    def liberal(S, N, *, resamples, seed, alpha):
        return np.full(S.shape[1], 0.001), ["fake"] * S.shape[1], np.zeros(S.shape[1], dtype=np.int64)
    register("fake_sf", liberal, inverts="signflip")
    register("fake_none", liberal, inverts=None)
    t = _table(8, shift=0.0, seed=3)
    own, other = _compare(t, "fake_sf"), _compare(t, "fake_none")
    assert own["significant"][0] and other["significant"][0]
    assert own["ci_method"][0] == other["ci_method"][0] == "signflip-inversion"
    assert own["ci_low"][0] > 0 or own["ci_high"][0] < 0
    assert other["ci_low"][0] <= 0 <= other["ci_high"][0]


def test_a_declared_p_floor_removes_the_mde_and_is_reported(register):
    from ablate.components.stats.abilities import SmallestP
    register("fake_floor", _signflip_p, smallest_p=SmallestP("3/3^{g}", lambda g: 3.0 / 3.0 ** g))
    register("fake_nofloor", _signflip_p)
    t = _table(3)
    assert np.isnan(_compare(t, "fake_floor")["mde"][0])
    assert np.isfinite(_compare(t, "fake_nofloor")["mde"][0])
    r = _compare(t, "fake_floor")
    lines = cannot_reject(r, {"test": "fake_floor", "alpha": 0.05})
    assert len(lines) == 1 and "3/3^3" in lines[0] and "fake_floor test" in lines[0]
    assert cannot_reject(r, {"test": "fake_nofloor", "alpha": 0.05}) == []


def test_the_wilcoxon_column_is_filled_for_a_test_that_declares_it(register):
    register("fake_w", _t_p, wilcoxon_column=True)
    t = _table(20, per=1)
    assert np.isfinite(_compare(t, "fake_w")["p_wilcoxon"][0])
    register("fake_no_w", _t_p)
    assert _compare(t, "fake_no_w")["p_wilcoxon"].is_null().all() or \
        np.isnan(_compare(t, "fake_no_w")["p_wilcoxon"][0])


def _self_test(test, ci_method="inversion", **kw):
    return self_test(_table(14, per=4), baseline="baseline", metrics=["m/x"], test=test,
                     ci_method=ci_method, alpha=0.05, bootstrap_resamples=199, seed=3,
                     cluster_col="cluster", null_replicates=300, **kw)


def test_a_test_whose_self_test_p_is_the_cr2_t_is_the_t_family(register):
    register("fake_cr2", _never, self_test_p="cr2", inverts="t")
    rec = _self_test("fake_cr2")
    assert [f["family"] for f in rec["families"]] == ["fake_cr2"]
    t = {f["family"]: f for f in _self_test("t")["families"]}["t"]
    fam = rec["families"][0]
    assert fam["type_i"] == t["type_i"] and fam["interval"] == "t-inversion"


def test_a_monte_carlo_self_test_p_caps_the_nulls(register, monkeypatch):
    import ablate.components.stats.self_test as st
    monkeypatch.setattr(st, "NULL_WORK", 14 * 500 * 250)
    monkeypatch.setattr(st, "MIN_NULLS", 100)
    register("fake_mc", _never, self_test_p="signflip-mc", inverts="signflip")
    rec = _self_test("fake_mc")
    assert rec["null_replicates"] == 250
    assert [f["family"] for f in rec["families"]] == ["fake_mc", "t"]
    assert rec["families"][0]["interval"] == "signflip-inversion"


def test_an_interval_that_does_not_invert_the_test_claims_no_coverage(register):
    """The sign-flip inversion interval of a test that does not invert, and the t interval
    of a sign-flip test, are not 1 - type-I: the self-test says it did not simulate them."""
    register("fake_plain", _t_p, inverts=None)
    fam = _self_test("fake_plain")["families"][0]
    assert fam["interval"] == "signflip-inversion" and fam["coverage"] is None
    assert "inverts" not in fam["coverage_note"]
    text = self_test_text(_self_test("fake_plain"))
    assert "inverts the test" not in text.split(";")[0]
    perm_t = _self_test("permutation", ci_method="t")["families"][0]
    assert perm_t["family"] == "permutation" and "inverts" not in perm_t["coverage_note"]
    own = _self_test("permutation")["families"][0]
    assert own["coverage_note"].startswith("inverts")


def test_the_report_states_the_declared_assumption_and_name(register):
    register("fake_sym", _t_p, symmetric=True, also_called="fake-flip", inverts="t")
    text = error_rates_text({"test": "fake_sym", "alpha": 0.05}, pl.DataFrame())
    assert "the fake test assumes nothing at all" in text and "sign-flip" not in text
    worth = pl.DataFrame({"test": ["fake_sym"], "ci_flag": [""], "metric": ["m/x"],
                          "kind": ["shapley"], "ci_level": [0.975]})
    assert any("fake-flip test's p assumes" in c for c in _caveats(worth, ["m/x"], 0.05))
    assert "cluster-robust t" in ci_text({"test": "fake_sym", "alpha": 0.05})
    register("fake_asym", _t_p)
    worth = worth.with_columns(test=pl.lit("fake_asym"))
    assert not any("symmetric" in c for c in _caveats(worth, ["m/x"], 0.05))


def test_power_says_whether_the_plan_is_the_tests_own(register):
    from ablate.flows.cli.power import planned_note
    register("fake_own", _t_p, power="own")
    register("fake_borrowed", _t_p, power="t")
    assert planned_note("fake_own") == ""
    assert "fake_borrowed test is planned with the t-test's power" in planned_note("fake_borrowed")


@pytest.mark.parametrize("declared, message", [
    ({"power": None}, "power=None: expected one of"),
    ({"inverts": "bootstrap"}, "inverts='bootstrap'"),
    ({"invert": "t"}, "declares invert, which no paired test has"),
])
def test_registration_refuses_an_ability_it_does_not_understand(register, declared, message):
    with pytest.raises(RegistrationError, match=message):
        register("fake_bad", _t_p, **declared)
    assert "fake_bad" not in TESTS


def test_registration_refuses_a_test_that_declares_nothing(register):
    with pytest.raises(RegistrationError, match="does not declare inverts, smallest_p"):
        TESTS.register("fake_silent")(_t_p)


def test_the_docs_example_test_registers_and_conforms(monkeypatch):
    """docs/extending.md's example plugin (the sign test) passes the conformance suite."""
    from pathlib import Path

    from tests.contract.test_conformance import check_component
    monkeypatch.setattr(TESTS, "_items", dict(TESTS._items))
    monkeypatch.setattr(TESTS, "_decls", dict(TESTS._decls))
    text = (Path(__file__).resolve().parents[3] / "docs" / "extending.md").read_text()
    block = text.split("# a plugin: the sign test")[1].split("\n", 1)[1].split("```")[0]
    exec(compile(block, "docs/extending.md", "exec"), {})
    check_component(TESTS.declaration("sign"))
    r = _compare(_table(3), "sign")
    assert np.isnan(r["mde"][0])  # 3 clusters: its smallest p, 2/2^3, is above alpha


def test_a_report_of_a_test_whose_plugin_is_not_loaded_claims_nothing_of_it():
    """`ablate report` of a sweep run with a plugin's test, without the plugin: no
    failure, and no sign-flip claims made for it."""
    st = {"test": "plugin_test", "alpha": 0.05}
    text = error_rates_text(st, pl.DataFrame())
    assert "declared by its plugin" in text and "sign-flip" not in text
    key = pl.DataFrame({"n_clusters": [2], "variant": ["v"], "metric": ["m/x"]})
    assert cannot_reject(key, st) == []
    worth = pl.DataFrame({"test": ["plugin_test"], "ci_flag": [""], "metric": ["m/x"],
                          "kind": ["shapley"], "ci_level": [0.975]})
    assert not any("symmetric" in c for c in _caveats(worth, ["m/x"], 0.05))
