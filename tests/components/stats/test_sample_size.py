"""Needed n for a target MDE: closed-form cases, undefined cases, and a simulation that
the predicted n reaches the target power; on clustered pilots, the plan in clusters."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy import stats as sps
from statsmodels.stats.power import TTestPower

from ablate.components.contract.errors import InputError
from ablate.components.stats import compare_variants
from ablate.components.stats.clusters import cluster_ttest
from ablate.components.stats.power import ttest_power
from ablate.components.stats.sample_size import FEW_CHANGED, n_for_dz, planning_alpha, sample_size
from ablate.components.stats.signflip import signflip_pvalues
from ablate.components.stats.table_prep import paired_differences

REPS = 2000  # simulated studies per case


@pytest.mark.parametrize("dz,alpha,power", [(0.5, 0.05, 0.8), (0.25, 0.0125, 0.9),
                                            (0.05, 0.05, 0.8), (1.2, 0.01, 0.95)])
def test_n_is_the_smallest_that_reaches_the_power(dz, alpha, power):
    n = n_for_dz(dz, alpha, power)
    ref = TTestPower().solve_power(effect_size=dz, nobs=None, alpha=alpha, power=power,
                                   alternative="two-sided")
    assert n == math.ceil(ref)
    assert ttest_power(dz, n, alpha) >= power > ttest_power(dz, n - 1, alpha)


@pytest.mark.parametrize("dz,alpha,power", [(0.05, 0.05, 0.8), (0.02, 0.01, 0.9)])
def test_large_n_matches_guenthers_closed_form(dz, alpha, power):
    # n = ((z_{1-a/2} + z_power) / d)^2 + z_{1-a/2}^2 / 2 (Guenther 1981), exact as n grows
    za, zb = sps.norm.ppf(1 - alpha / 2), sps.norm.ppf(power)
    closed = (za + zb) ** 2 / dz ** 2 + za ** 2 / 2
    assert abs(n_for_dz(dz, alpha, power) - closed) <= 1.0


def test_sample_size_uses_mde_over_sd_of_the_differences():
    rng = np.random.default_rng(1)
    d = rng.normal(0.02, 0.3, 80)
    s = sample_size(d, 0.05, alpha=0.01, power=0.9)
    assert s.n_pilot == 80 and s.delta == pytest.approx(d.mean())
    assert s.sd == pytest.approx(d.std(ddof=1)) and s.dz == pytest.approx(0.05 / s.sd)
    assert s.n == n_for_dz(0.05 / d.std(ddof=1), 0.01, 0.9)
    # the same study in other units (x10) needs the same n; a doubled sd about 4x as many
    assert sample_size(10 * d, 0.5, alpha=0.01, power=0.9).n == s.n
    assert sample_size(2 * d, 0.05, alpha=0.01, power=0.9).n == pytest.approx(4 * s.n, rel=0.01)
    # undefined scores (NaN) are left out of the pilot
    with_nan = np.r_[d, np.nan, np.inf]
    assert sample_size(with_nan, 0.05, alpha=0.01, power=0.9) == s


@pytest.mark.parametrize("correction,expected", [
    ("holm", 0.05 / 4), ("bonferroni", 0.05 / 4), ("bh", 0.05 / 4),
    ("by", 0.05 / (4 * (1 + 1 / 2 + 1 / 3 + 1 / 4))), ("none", 0.05)])
def test_planning_alpha_per_correction(correction, expected):
    assert planning_alpha(0.05, correction, 4) == pytest.approx(expected)
    assert planning_alpha(0.05, correction, 1) == pytest.approx(0.05)


@pytest.mark.parametrize("diffs,reason", [
    ([0.0] * 20, "no question's score changed"),
    ([0.1] * 20, "changed by the same amount"),
    ([0.3], "1 pair with both scores defined"),
    ([np.nan, np.nan], "0 pairs with both scores defined"),
    ([], "0 pairs"),
])
def test_undefined_cases_give_a_reason_not_a_crash(diffs, reason):
    s = sample_size(np.array(diffs, dtype=float), 0.05, alpha=0.05)
    assert s.n is None and reason in s.reason


def test_tiny_effect_beyond_the_cap_is_undefined():
    s = sample_size(np.array([-1.0, 1.0] * 5), 1e-6, alpha=0.05)
    assert s.n is None and "more than" in s.reason


def test_few_changed_questions_are_flagged_rough():
    d = np.zeros(50)
    d[:3] = [0.5, -0.2, 0.4]
    s = sample_size(d, 0.05, alpha=0.05)
    assert s.n is not None and s.n_changed == 3 and s.rough
    d[:FEW_CHANGED] = 0.3
    assert not sample_size(d, 0.05, alpha=0.05).rough


@pytest.mark.parametrize("kwargs,field", [
    ({"mde": 0.0}, "mde"), ({"mde": -0.1}, "mde"), ({"mde": float("nan")}, "mde"),
    ({"power": 1.0}, "power"), ({"alpha": 0.0}, "alpha")])
def test_bad_targets_are_input_errors(kwargs, field):
    args = {"mde": 0.05, "power": 0.8, "alpha": 0.05, **kwargs}
    with pytest.raises(InputError) as exc:
        sample_size(np.ones(5), args["mde"], alpha=args["alpha"], power=args["power"])
    assert exc.value.field == field


# --- simulation: at the predicted n, the test rejects at the target rate --------------

def _ttest_rate(d: np.ndarray, alpha: float) -> float:
    return float((sps.ttest_1samp(d, 0.0, axis=1).pvalue <= alpha).mean())


# 4 SE of a rejection rate near 0.8 over 2000 studies is 0.036; a plan off by a
# quarter of n misses by more (the 0.75 n check below shows it).
TOL = 0.035


@pytest.mark.parametrize("sd,mde,alpha,power,seed", [
    (1.0, 0.5, 0.05, 0.9, 11),      # n 44
    (0.3, 0.05, 0.05 / 4, 0.8, 12),  # Holm, 4 comparisons: n 405
])
def test_simulated_power_at_predicted_n_normal(sd, mde, alpha, power, seed):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=300)
    pilot = (z - z.mean()) / z.std(ddof=1) * sd + mde   # sd known exactly, effect = MDE
    n = sample_size(pilot, mde, alpha=alpha, power=power).n
    rate = _ttest_rate(rng.normal(mde, sd, (REPS, n)), alpha)
    assert abs(rate - power) <= TOL
    short = _ttest_rate(rng.normal(mde, sd, (REPS, int(0.75 * n))), alpha)
    assert short < power - TOL


def test_simulated_power_on_a_binary_metric():
    # differences of a 0/1 metric: -1 / 0 / +1 with probabilities 0.10 / 0.75 / 0.15,
    # true effect 0.05 = the target MDE, Holm over 4 comparisons; the pilot has exactly
    # those shares
    p_minus, p_plus, mde, alpha, power = 0.10, 0.15, 0.05, 0.05 / 4, 0.8
    pilot = np.repeat([-1.0, 0.0, 1.0], [20, 150, 30])
    n = sample_size(pilot, mde, alpha=alpha, power=power).n
    rng = np.random.default_rng(21)

    def draw(size):
        return rng.choice([-1.0, 0.0, 1.0], size=size, p=[p_minus, 1 - p_minus - p_plus, p_plus])
    assert abs(_ttest_rate(draw((REPS, n)), alpha) - power) <= TOL
    assert _ttest_rate(draw((REPS, int(0.75 * n))), alpha) < power - TOL
    # the default test (sign flips; exact McNemar on 0/1 data) is slightly conservative
    # here, as the docs say: a little below the target
    p, method = signflip_pvalues(draw((REPS, n)).T, resamples=1000, seed=0)
    assert set(method) == {"exact-grid"}
    rate = float((p <= alpha).mean())
    assert power - 0.05 <= rate <= power + 0.01


# --- clustered pilots: the plan in clusters (issue 27) ---------------------------------

def _cluster_se(d: np.ndarray, labels: np.ndarray) -> float:
    """The cluster-robust SE of the mean, written out (G / (G - 1) small-sample factor)."""
    _, codes = np.unique(labels, return_inverse=True)
    g = codes.max() + 1
    S, N = np.bincount(codes, d), np.bincount(codes)
    theta = S.sum() / N.sum()
    return float(np.sqrt(g / (g - 1) * ((S - theta * N) ** 2).sum()) / N.sum())


def _icc_pilot(g: int, m: int, icc: float, effect: float, seed: int):
    """g clusters of m differences, total variance 1 at intraclass correlation icc."""
    rng = np.random.default_rng(seed)
    u = rng.normal(0, math.sqrt(icc), g)
    e = rng.normal(0, math.sqrt(1 - icc), (g, m))
    return (effect + u[:, None] + e).ravel(), np.repeat([f"doc{j}" for j in range(g)], m)


def test_clustered_pilot_plans_many_more_questions_than_the_independent_formula():
    d, labels = _icc_pilot(12, 20, 0.5, 0.1, seed=4)
    mde, alpha, power = 0.2, 0.05 / 2, 0.8
    independent = sample_size(d, mde, alpha=alpha, power=power)
    s = sample_size(d, mde, alpha=alpha, power=power, clusters=labels)
    # the design effect at ICC 0.5 and 20 per cluster is about 1 + 19 * 0.5 = 10.5
    assert s.n >= 4 * independent.n
    se = _cluster_se(d, labels)
    # the needed clusters: the t test on G clusters (G - 1 df) at the cluster-level sd
    # sqrt(G_pilot) * SE; the questions: those clusters x the pilot's 20 per cluster
    assert s.clusters == n_for_dz(mde / (math.sqrt(12) * se), alpha, power)
    assert s.n == 20 * s.clusters and s.n_clusters_pilot == 12 and s.n_pilot == 240
    assert s.cluster_sd == pytest.approx(math.sqrt(12) * se)
    assert s.design_effect == pytest.approx(se ** 2 / (d.var(ddof=1) / 240))
    assert s.design_effect > 4
    assert s.sd == independent.sd and s.delta == independent.delta  # question-level, shown


def test_every_question_its_own_cluster_plans_todays_n():
    rng = np.random.default_rng(1)
    d = rng.normal(0.02, 0.3, 80)
    today = sample_size(d, 0.05, alpha=0.01, power=0.9)
    assert today.n == n_for_dz(0.05 / d.std(ddof=1), 0.01, 0.9)
    assert today.clusters == today.n and today.n_clusters_pilot == 80
    assert today.design_effect == 1.0 and today.cluster_sd == today.sd
    for labels in (np.arange(80), np.array([f"q{i}" for i in range(80)])):
        assert sample_size(d, 0.05, alpha=0.01, power=0.9, clusters=labels) == today
    # the cluster formula itself reduces to it: sqrt(n) * SE is the sd of the differences
    assert math.sqrt(80) * _cluster_se(d, np.arange(80)) == pytest.approx(d.std(ddof=1))


def test_uneven_clusters_plan_the_pilots_mean_size_and_drop_undefined_scores():
    rng = np.random.default_rng(3)
    sizes = np.array([3, 9, 5, 7, 6, 10, 2, 8, 4, 6])      # 60 questions, mean 6
    labels = np.repeat(np.arange(10), sizes)
    d = rng.normal(0.0, 0.2, 60) + rng.normal(0, 0.2, 10)[labels]
    s = sample_size(d, 0.05, alpha=0.05, clusters=labels)
    assert s.n == math.ceil(s.clusters * 6)
    # an undefined score leaves its question (and label) out
    d2, l2 = np.r_[d, np.nan, np.inf], np.r_[labels, 3, 99]
    assert sample_size(d2, 0.05, alpha=0.05, clusters=l2) == s


@pytest.mark.parametrize("diffs,labels,reason", [
    ([0.1, 0.3, -0.2, 0.4], [0, 0, 0, 0], "1 cluster"),
    ([0.0] * 6, [0, 0, 1, 1, 2, 2], "no question's score changed"),
])
def test_undefined_clustered_plans_give_a_reason(diffs, labels, reason):
    s = sample_size(np.array(diffs), 0.05, alpha=0.05, clusters=np.array(labels))
    assert s.n is None and s.clusters is None and reason in s.reason


def test_a_design_effect_below_one_is_planned_as_one():
    # every cluster has the same mean (cluster totals without variance): the estimated
    # design effect is 0; the plan is that of independent questions, in clusters of 4
    rng = np.random.default_rng(8)
    e = rng.normal(0, 0.3, (10, 4))
    d = (0.05 + e - e.mean(axis=1, keepdims=True)).ravel()
    labels = np.repeat(np.arange(10), 4)
    independent = sample_size(d, 0.05, alpha=0.05)
    s = sample_size(d, 0.05, alpha=0.05, clusters=labels)
    assert s.design_effect < 1e-20 and s.cluster_sd == pytest.approx(s.sd / 2)
    assert s.clusters == n_for_dz(0.05 / (s.sd / 2), 0.05, 0.8)
    assert s.n == 4 * s.clusters and independent.n <= s.n <= independent.n + 4 * 2


def test_clusters_must_match_the_differences():
    with pytest.raises(ValueError):
        sample_size(np.ones(5), 0.05, alpha=0.05, clusters=np.arange(4))


def _cluster_rate(rng, g: int, m: int, icc: float, effect: float, alpha: float) -> float:
    """Rejection rate of the cluster-robust t test (clusters.cluster_ttest) over REPS
    simulated studies of g clusters x m questions at intraclass correlation icc."""
    u = rng.normal(0, math.sqrt(icc), (g, 1, REPS))
    d = effect + u + rng.normal(0, math.sqrt(1 - icc), (g, m, REPS))
    S, N = d.sum(axis=1), np.full((g, REPS), float(m))
    return float((cluster_ttest(S, N, alpha)[1] <= alpha).mean())


def test_simulated_power_at_the_planned_size_on_clustered_data():
    # ICC 0.5, 20 questions per cluster, a pilot of 12 clusters whose cluster means have
    # exactly the true sd (sqrt(0.5 + 0.5 / 20)); true effect = MDE; Holm over 2
    g0, m, icc, mde, alpha, power = 12, 20, 0.5, 0.4, 0.05 / 2, 0.8
    rng = np.random.default_rng(27)
    z = rng.normal(size=g0)
    means = (z - z.mean()) / z.std(ddof=1) * math.sqrt(icc + (1 - icc) / m) + mde
    e = rng.normal(0, math.sqrt(1 - icc), (g0, m))
    pilot = (means[:, None] + e - e.mean(axis=1, keepdims=True)).ravel()
    labels = np.repeat(np.arange(g0), m)
    s = sample_size(pilot, mde, alpha=alpha, power=power, clusters=labels)
    assert s.n == s.clusters * m
    rate = _cluster_rate(rng, s.clusters, m, icc, mde, alpha)
    assert rate >= 0.7 and abs(rate - power) <= TOL
    assert _cluster_rate(rng, int(0.75 * s.clusters), m, icc, mde, alpha) < power - TOL
    # the question-level plan, run on this clustered data, is far from the target
    n_indep = sample_size(pilot, mde, alpha=alpha, power=power).n
    assert _cluster_rate(rng, max(2, math.ceil(n_indep / m)), m, icc, mde, alpha) < 0.5


def test_the_plan_at_the_stats_mde_needs_the_pilots_clusters():
    """stats.parquet's MDE and `ablate power` agree: the MDE that compare_variants reports
    (corrected planning alpha, G - 1 df, cluster SE) is what the pilot's own number of
    clusters detects, so planning for it asks for exactly those clusters."""
    d, labels = _icc_pilot(15, 8, 0.3, 0.1, seed=9)
    rng = np.random.default_rng(2)
    base = rng.uniform(0, 1, d.size)
    other = base + rng.normal(0, 0.5, d.size)
    qids = [f"q{i}" for i in range(d.size)]
    table = pl.DataFrame({"variant": ["b"] * d.size + ["v"] * d.size + ["w"] * d.size,
                          "qid": qids * 3, "cluster": list(labels) * 3,
                          "m": np.r_[base, base + d, other]})
    stats = compare_variants(table, baseline="b", metrics=["m"], cluster_col="cluster",
                             correction="holm", resamples=200, bootstrap_resamples=200)
    row = stats.filter(pl.col("variant") == "v").row(0, named=True)
    a = planning_alpha(0.05, "holm", row["family_size"])
    pd_, pl_ = paired_differences(table, "b", "v", "m", "cluster")
    assert row["n_clusters"] == 15 and row["family_size"] == 2
    assert sample_size(pd_, 0.05, alpha=a, clusters=pl_).design_effect > 1  # no floor
    assert sample_size(pd_, row["mde"] * (1 + 1e-9), alpha=a, clusters=pl_).clusters == 15
    assert sample_size(pd_, row["mde"] * (1 - 1e-6), alpha=a, clusters=pl_).clusters == 16
