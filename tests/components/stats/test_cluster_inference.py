"""The cluster is the unit of every test and interval, and the default interval is the
inversion of the test (issue 27): clustered null variants are rejected at about alpha,
intervals contain their estimate, are never zero-width when pairs differ, and agree with
`significant` by construction."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from ablate.components.contract.errors import InputError
from ablate.components.stats import compare_variants


def _clustered_nulls(n_variants: int, clusters: int, size: int, icc: float, seed: int,
                     binary: bool = False) -> pl.DataFrame:
    """Baseline scores and null variants whose paired difference has a cluster effect
    (intraclass correlation `icc`) with mean 0."""
    rng = np.random.default_rng(seed)
    n = clusters * size
    cl = np.repeat(np.arange(clusters), size)
    base = rng.uniform(0.3, 0.7, n)
    frames = [pl.DataFrame({"variant": "baseline", "qid": np.arange(n), "cluster": cl,
                            "m": base})]
    for v in range(n_variants):
        u = rng.normal(0, math.sqrt(icc), clusters)[cl] + rng.normal(0, math.sqrt(1 - icc), n)
        d = np.sign(u) * (rng.uniform(size=n) < 0.3) if binary else 0.1 * u
        frames.append(pl.DataFrame({"variant": f"v{v:03d}", "qid": np.arange(n),
                                    "cluster": cl, "m": base + d}))
    return pl.concat(frames).with_columns(pl.col("cluster").cast(pl.String))


def test_clustered_null_variants_are_rejected_at_about_alpha():
    # question-level tests rejected ~41 % of these (20 clusters x 10, ICC 0.5)
    table = _clustered_nulls(200, 20, 10, 0.5, seed=3)
    for test in ("permutation", "t"):
        out = compare_variants(table, baseline="baseline", metrics=["m"], test=test,
                               correction="none", resamples=2000, cluster_col="cluster")
        rate = float((out["p_value"] < 0.05).mean())
        assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 200), (test, rate)
        assert (out["n_clusters"] == 20).all() and (out["clustered_by"] == "cluster").all()
        covered = float(((out["ci_low"] <= 0) & (out["ci_high"] >= 0)).mean())
        assert covered >= 0.95 - 3 * math.sqrt(0.05 * 0.95 / 200), (test, covered)


def _six_of_thirty(n_tie: int = 24) -> pl.DataFrame:
    rows = [("baseline", f"q{i:02d}", 0.0) for i in range(6 + n_tie)]
    rows += [("v", f"q{i:02d}", 1.0 if i < 6 else 0.0) for i in range(6 + n_tie)]
    return pl.DataFrame(rows, schema=["variant", "qid", "m"], orient="row")


def test_few_differing_pairs_give_an_interval_not_a_point():
    r = compare_variants(_six_of_thirty(), baseline="baseline", metrics=["m"]).row(0, named=True)
    assert r["delta"] == pytest.approx(0.2)
    assert r["ci_low"] < r["delta"] < r["ci_high"]          # was [0.200, 0.200]
    assert r["ci_high"] - r["ci_low"] > 0.1
    assert r["significant"] == (r["ci_low"] > 0)
    # 6 changed questions (k < 10) of a 0/1 metric: widened by the Tango interval (issue 38)
    assert r["ci_method"] == "signflip-inversion+tango" and r["ci_level"] == pytest.approx(0.95)


def _random_table(rng: np.random.Generator) -> tuple[pl.DataFrame, str | None]:
    n_var = int(rng.integers(1, 6))
    clusters = int(rng.integers(3, 30))
    size = int(rng.integers(1, 6))
    n = clusters * size
    cl = np.repeat(np.arange(clusters), size).astype(str)
    kind = rng.integers(0, 3)
    base = rng.integers(0, 2, n).astype(float) if kind == 0 else rng.uniform(0, 1, n)
    frames = [pl.DataFrame({"variant": "baseline", "qid": np.arange(n), "cluster": cl, "m": base})]
    for v in range(n_var):
        shift = rng.normal(0, 0.15)
        if kind == 0:
            flip = rng.uniform(size=n) < rng.uniform(0.02, 0.3)
            y = np.where(flip, 1.0 - base, base)
        elif kind == 1:
            y = np.where(rng.uniform(size=n) < 0.7, base, base + shift + rng.normal(0, 0.1, n))
        else:
            y = base + shift + rng.exponential(0.2, n) - 0.2
        frames.append(pl.DataFrame({"variant": f"v{v}", "qid": np.arange(n), "cluster": cl, "m": y}))
    return pl.concat(frames), ("cluster" if rng.uniform() < 0.6 else None)


def test_significant_and_interval_never_disagree_and_contain_the_estimate():
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(60):
        table, cluster = _random_table(rng)
        for correction in ("holm", "none"):
            out = compare_variants(table, baseline="baseline", metrics=["m"], resamples=999,
                                   correction=correction, cluster_col=cluster)
            for r in out.iter_rows(named=True):
                if math.isnan(r["delta"]):
                    continue
                lo, hi = r["ci_low"], r["ci_high"]
                lo = -math.inf if math.isnan(lo) else lo
                hi = math.inf if math.isnan(hi) else hi
                assert lo <= r["delta"] <= hi, r
                assert r["significant"] == (lo > 0 or hi < 0), r
                if r["wins"] + r["losses"] > 0:
                    assert hi > lo, r
                checked += 1
    assert checked > 200


def test_t_test_interval_agrees_with_it_too():
    rng = np.random.default_rng(5)
    for _ in range(20):
        table, cluster = _random_table(rng)
        out = compare_variants(table, baseline="baseline", metrics=["m"], test="t",
                               cluster_col=cluster)
        for r in out.iter_rows(named=True):
            if math.isnan(r["ci_low"]):
                continue
            assert r["significant"] == (r["ci_low"] > 0 or r["ci_high"] < 0), r


def test_cluster_robust_t_matches_the_formula():
    rng = np.random.default_rng(2)
    table = _clustered_nulls(1, 8, 4, 0.3, seed=2)
    out = compare_variants(table, baseline="baseline", metrics=["m"], test="t",
                           cluster_col="cluster").row(0, named=True)
    wide = table.pivot(on="variant", index=["qid", "cluster"], values="m")
    d = (wide["v000"] - wide["baseline"]).to_numpy()
    g = wide["cluster"].to_numpy()
    theta = d.mean()
    sums = np.array([((d - theta)[g == c]).sum() for c in np.unique(g)])
    se = math.sqrt(8 / 7 * (sums**2).sum()) / d.size
    from scipy import stats as sps
    assert out["t_stat"] == pytest.approx(theta / se)
    assert out["p_value"] == pytest.approx(2 * sps.t.sf(abs(theta / se), 7))
    del rng


def test_without_clusters_the_question_level_tests_are_unchanged():
    rng = np.random.default_rng(4)
    n = 40
    base = rng.uniform(0, 1, n)
    d = rng.normal(0.05, 0.2, n)
    table = pl.concat([pl.DataFrame({"variant": "baseline", "qid": np.arange(n), "m": base}),
                       pl.DataFrame({"variant": "v", "qid": np.arange(n), "m": base + d})])
    r = compare_variants(table, baseline="baseline", metrics=["m"], test="t").row(0, named=True)
    from scipy import stats as sps
    ref = sps.ttest_rel(base + d, base)
    assert r["p_value"] == pytest.approx(ref.pvalue) and r["n_clusters"] == n
    assert r["clustered_by"] == "none"


def test_wilcoxon_is_refused_on_clusters():
    table = _clustered_nulls(1, 10, 3, 0.2, seed=1)
    with pytest.raises(InputError, match="wilcoxon test assumes independent questions"):
        compare_variants(table, baseline="baseline", metrics=["m"], test="wilcoxon",
                         cluster_col="cluster")


@pytest.mark.parametrize("bad, message", [
    (lambda c: pl.lit(None, pl.String), "empty value"),
    (lambda c: pl.lit("one"), "every question is in one cluster"),
    (lambda c: pl.when(pl.col("qid") == 3).then(None).otherwise(c), "empty value"),
])
def test_a_bad_cluster_column_is_one_line(bad, message):
    table = _clustered_nulls(1, 5, 3, 0.2, seed=1)
    table = table.with_columns(bad(pl.col("cluster")).alias("cluster"))
    with pytest.raises(InputError, match=message):
        compare_variants(table, baseline="baseline", metrics=["m"], cluster_col="cluster")


def test_mde_is_at_the_corrected_level_and_on_clusters():
    table = _clustered_nulls(4, 20, 5, 0.5, seed=9)
    holm = compare_variants(table, baseline="baseline", metrics=["m"], cluster_col="cluster")
    none = compare_variants(table, baseline="baseline", metrics=["m"], correction="none",
                            cluster_col="cluster")
    indep = compare_variants(table, baseline="baseline", metrics=["m"], correction="none")
    assert (holm["mde"] > none["mde"]).all()    # alpha / 4 needs a larger effect
    assert (none["mde"] > indep["mde"]).all()   # 20 clusters know less than 100 questions
