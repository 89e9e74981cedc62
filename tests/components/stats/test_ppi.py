"""Judge-corrected estimates (prediction-powered inference, issue 29): hand-computed
cases, the limits (a perfect judge; lambda = 0 is the labelled-only estimate) against
clusters.py's cluster-robust standard error, degenerate inputs, and the label planner."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ablate.components.stats.clusters import bm_df, cluster_se, cluster_sums
from ablate.components.stats.ppi import (
    interval,
    ppi_mean,
    ppi_paired,
    ppi_parts,
    ppi_result,
    ppi_se,
    tuned_lambda,
)
from ablate.components.stats.ppi_plan import plan_labels, predicted_half_width

NAN = math.nan


def _se_of(values: np.ndarray, used: np.ndarray, clusters: np.ndarray) -> float:
    codes = np.unique(clusters, return_inverse=True)[1]
    S, N = cluster_sums(values[:, None], used[:, None], codes)
    return float(cluster_se(S, N)[1][0])


def _clustered(seed: int, G: int = 12, m: int = 8, frac: float = 0.4):
    rng = np.random.default_rng(seed)
    cl = np.repeat(np.arange(G), m).astype(str)
    truth = (rng.normal(0, 1, G)[np.repeat(np.arange(G), m)] + rng.normal(0, 1, G * m)
             > 0).astype(float)
    f = np.where(rng.uniform(size=G * m) < 0.2, 1 - truth, truth)
    y = np.where(rng.uniform(size=G * m) < frac, truth, NAN)
    return f, y, truth, cl


def test_hand_computed_classic_ppi():
    f = np.array([1, 0, 1, 1, 0, 1.0])
    y = np.array([1, 1, 0, NAN, NAN, NAN])
    r = ppi_mean(f, y, lam=1.0)
    # mean(f) = 4/6, rectifier y - f on the labelled = (0, 1, -1): mean 0
    assert r.estimate == pytest.approx(2 / 3)
    # u = f - 2/3 + (N/n) 1_L (r - 0) = (1/3, 4/3, -5/3, 1/3, -2/3, 1/3), sum u^2 = 16/3;
    # SE^2 = G_L/(G_L - 1) * sum u^2 / N^2 = 1.5 * 16/3 / 36 = 2/9, df = G_L - 1 = 2
    assert r.se == pytest.approx(math.sqrt(2 / 9))
    assert r.df == 2
    half = 4.302652729911275 * math.sqrt(2 / 9)  # t(2) at 0.975
    assert (r.ci_low, r.ci_high) == pytest.approx((2 / 3 - half, 2 / 3 + half))
    from scipy.stats import t as student
    assert r.p == pytest.approx(2 * student.sf((2 / 3) / math.sqrt(2 / 9), 2))
    assert (r.n_all, r.n_labelled, r.clusters_all, r.clusters_labelled) == (6, 3, 6, 3)
    assert r.lam == 1.0 and r.reason == ""


def test_tuned_lambda_is_the_variance_minimiser_clipped_to_0_1():
    f = np.array([1, 0, 1, 1, 0, 1.0])
    y = np.array([1, 1, 0, NAN, NAN, NAN])
    # lambda* = -sum A_g B_g / sum A_g^2 = -(2/3) / (4/3) = -0.5: clipped to 0, the
    # labelled-only mean 2/3 (this judge disagrees with the labels)
    r = ppi_result(ppi_parts(f, y))
    assert r.lam == 0.0 and r.estimate == pytest.approx(2 / 3)
    # within [0, 1] the tuned lambda has the smallest standard error
    f2, y2, _, cl = _clustered(5)
    parts = ppi_parts(f2, y2, cl)
    lam = tuned_lambda(parts)
    assert 0.0 < lam < 1.0
    for other in np.linspace(0, 1, 21):
        assert ppi_se(parts, lam) <= ppi_se(parts, float(other)) + 1e-12


def test_default_lambda_is_cross_fitted_over_clusters():
    f, y, _, cl = _clustered(5)
    parts = ppi_parts(f, y, cl)
    A, B = parts.A, parts.B
    codes = np.unique(cl, return_inverse=True)[1]
    lam_g = np.array([np.clip(-np.delete(A * B, g).sum() / np.delete(A * A, g).sum(), 0, 1)
                      for g in range(A.size)])
    r = ppi_mean(f, y, cl)
    # classic PPI with the judge rescaled by the other clusters' lambda
    same = ppi_mean(lam_g[codes] * f, y, cl, lam=1.0)
    assert (r.estimate, r.se, r.p) == pytest.approx((same.estimate, same.se, same.p))
    lab = np.isfinite(y)
    expect = (lam_g[codes] * f).mean() + (y[lab] - (lam_g[codes] * f)[lab]).mean()
    assert r.estimate == pytest.approx(expect)
    assert r.lam == pytest.approx(lam_g[codes].mean())
    assert abs(r.lam - tuned_lambda(parts)) < 0.1


def test_lambda_zero_is_the_labelled_only_estimate_with_clusters_se():
    f, y, _, cl = _clustered(1)
    lab = np.isfinite(y)
    r = ppi_mean(f, y, cl, lam=0.0)
    assert r.estimate == pytest.approx(float(y[lab].mean()))
    assert r.se == pytest.approx(_se_of(np.nan_to_num(y), lab, cl), rel=1e-12)
    # the t referent: Bell-McCaffrey df of the labelled cluster sizes (G_L - 1 if equal)
    sizes = np.unique(cl[lab], return_counts=True)[1].astype(float)[:, None]
    assert r.df == pytest.approx(float(bm_df(sizes)[0])) and r.df <= len(set(cl[lab])) - 1


def test_a_perfect_judge_gives_the_truth_mean_over_all_questions():
    f, y, truth, cl = _clustered(2, frac=0.5)
    assert len(set(cl[np.isfinite(y)])) == 12  # every cluster has labels
    r = ppi_mean(truth, np.where(np.isfinite(y), truth, NAN), cl, lam=1.0)
    assert r.estimate == pytest.approx(truth.mean())
    # the rectifier is 0: the SE is the cluster-robust SE of the mean over all questions,
    # each cluster's squared residual sum weighted 1 / (1 - n_g / n) (its labels' share)
    codes = np.unique(cl, return_inverse=True)[1]
    S, N = cluster_sums(truth[:, None], np.ones((truth.size, 1), bool), codes)
    n_lab = np.bincount(codes[np.isfinite(y)], minlength=N.shape[0])
    h = n_lab / n_lab.sum()
    want = math.sqrt(((S[:, 0] - truth.mean() * N[:, 0]) ** 2 / (1 - h)).sum()) / truth.size
    assert r.se == pytest.approx(want, rel=1e-12)
    assert r.se == pytest.approx(_se_of(truth, np.ones(truth.size, bool), cl), rel=0.05)
    tuned = ppi_mean(truth, np.where(np.isfinite(y), truth, NAN), cl)
    assert tuned.lam > 0.9 and abs(tuned.estimate - truth.mean()) < tuned.se / 10


def test_paired_difference_is_the_mean_machinery_on_differences():
    f, y, truth, cl = _clustered(3)
    fb, yb, _, _ = _clustered(4)
    yb = np.where(np.isfinite(y), yb, NAN)
    yb[np.flatnonzero(np.isfinite(y))[:3]] = NAN  # labelled for the variant only
    d = ppi_paired(f, fb, y, yb, cl, lam=0.7)
    m = ppi_mean(f - fb, y - yb, cl, lam=0.7)
    assert (d.estimate, d.se, d.p, d.n_labelled) == (m.estimate, m.se, m.p, m.n_labelled)
    both = np.isfinite(y) & np.isfinite(yb)
    assert d.n_labelled == both.sum()
    expect = 0.7 * (f - fb).mean() + ((y - yb)[both] - 0.7 * (f - fb)[both]).mean()
    assert d.estimate == pytest.approx(expect)


def test_undefined_judge_scores_are_excluded_and_counted():
    f = np.array([1, NAN, 1, 1, 0, 1, 0, NAN])
    y = np.array([1, 1, 0, 1, NAN, NAN, NAN, NAN])
    r = ppi_mean(f, y, lam=1.0)
    assert (r.n_all, r.n_undefined, r.n_labelled, r.labels_unused) == (6, 2, 3, 1)
    assert r.estimate == pytest.approx(np.mean([1, 1, 1, 0, 1, 0]) + np.mean([0, -1, 0]))


def test_fewer_than_two_labelled_clusters_is_undefined_not_a_crash():
    f, y, _, cl = _clustered(6)
    y = np.where(cl == "0", y, NAN)
    r = ppi_mean(f, y, cl)
    assert r.clusters_labelled == 1 and math.isfinite(r.estimate)
    assert all(math.isnan(v) for v in (r.se, r.p, r.ci_low, r.ci_high))
    assert "labelled cluster" in r.reason
    none = ppi_mean(f, np.full(f.size, NAN), cl)
    assert none.n_labelled == 0 and math.isnan(none.estimate) and none.reason
    empty = ppi_mean(np.full(4, NAN), np.full(4, NAN))
    assert empty.n_all == 0 and math.isnan(empty.estimate) and empty.reason


def test_all_equal_values_give_zero_se():
    r = ppi_mean(np.ones(10), np.r_[np.ones(5), np.full(5, NAN)])
    assert r.estimate == 1.0 and r.se == 0.0
    assert r.p == 0.0 and r.ci_low == r.ci_high == 1.0
    z = ppi_paired(np.ones(10), np.ones(10), np.r_[np.ones(5), np.full(5, NAN)],
                   np.r_[np.ones(5), np.full(5, NAN)])
    assert z.estimate == 0.0 and z.se == 0.0 and math.isnan(z.p)
    assert z.ci_low == z.ci_high == 0.0 and "no variation" in z.reason


def test_interval_at_another_level():
    f, y, _, cl = _clustered(7)
    r = ppi_mean(f, y, cl, alpha=0.05)
    lo, hi = interval(r, 0.01)
    assert lo < r.ci_low and hi > r.ci_high
    assert interval(r, 0.05) == pytest.approx((r.ci_low, r.ci_high))


def test_planner_on_independent_questions_reproduces_the_pilot():
    f, y, _, _ = _clustered(9, G=40, m=10, frac=0.1)
    for lam in (0.8, None):  # None: the cross-fitted judge the analysis uses
        pilot = ppi_mean(f, y, lam=lam)
        h = (pilot.ci_high - pilot.ci_low) / 2
        # singleton clusters: SE^2 = n/(n-1) (K / N + s_r^2 / n) exactly
        assert predicted_half_width(f, y, None, pilot.n_labelled, lam=lam) == pytest.approx(h)
        plan = plan_labels(f, y, half_width=h * (1 + 1e-9), lam=lam)
        assert plan.labels == pilot.n_labelled == plan.clusters
        assert plan.lam == pytest.approx(pilot.lam)


def test_planner_on_clusters():
    f, y, _, cl = _clustered(8, G=40, m=10, frac=0.1)
    pilot = ppi_mean(f, y, cl)
    n0 = pilot.n_labelled
    h0 = predicted_half_width(f, y, cl, n0)
    # the model takes labels at random among questions: close to the pilot's own interval
    assert h0 == pytest.approx((pilot.ci_high - pilot.ci_low) / 2, rel=0.2)
    assert plan_labels(f, y, cl, half_width=h0).labels == n0
    widths = [predicted_half_width(f, y, cl, n) for n in (n0, 2 * n0, 4 * n0, 400)]
    assert widths == sorted(widths, reverse=True)
    less = plan_labels(f, y, cl, half_width=widths[1])
    assert less.labels == 2 * n0 and less.predicted <= widths[1]
    assert sum(np.unique(cl, return_counts=True)[1] > 0) >= less.clusters > pilot.clusters_labelled
    # a study of twice the questions (twice the clusters) needs fewer labels for h0
    assert plan_labels(f, y, cl, half_width=h0, n_all=800).labels < n0
    impossible = plan_labels(f, y, cl, half_width=1e-4)
    assert impossible.labels is None and "even" in impossible.reason
    undefined = plan_labels(f, np.where(cl == "0", y, NAN), cl, half_width=0.1)
    assert undefined.labels is None and undefined.reason
