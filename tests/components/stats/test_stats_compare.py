"""compare_variants end to end on small tables: columns, pairing, missingness,
corrections, references, determinism and bad input."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats as sps
from threadpoolctl import threadpool_limits

from ablate.components.contract.errors import InputError
from ablate.components.stats import STATS_COLUMNS, adjust_pvalues, compare_variants

ISSUE_COLUMNS = ("metric, variant, baseline, n_used, n_clusters, n_undefined, mean_variant, "
                 "mean_baseline, delta, ci_low, ci_high, ci_level, ci_method, p_value, p_ttest, "
                 "p_adjusted, significant, d_z, wins, ties, losses, mde, test, resamples, "
                 "correction, family_size").split(", ")


def make_table(n=40, variants=("base", "v1", "v2", "v3"), seed=0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    skill = rng.random(n)
    frames = []
    for i, v in enumerate(variants):
        frames.append(pl.DataFrame({
            "variant": [v] * n, "qid": [f"q{j:03d}" for j in range(n)],
            "hit": (rng.random(n) < skill + 0.1 * i).astype(float),
            "ndcg": np.clip(skill + 0.05 * i + rng.normal(0, 0.2, n), 0, 1),
            "f1": np.round(np.clip(skill + rng.normal(0, 0.3, n), 0, 1) * 2) / 2,
        }))
    return pl.concat(frames)


def test_columns_order_and_sorting():
    out = compare_variants(make_table(), baseline="base", metrics=["ndcg", "hit", "f1"],
                           resamples=500, bootstrap_resamples=500)
    assert list(STATS_COLUMNS) == ISSUE_COLUMNS
    assert out.columns[:len(STATS_COLUMNS)] == list(STATS_COLUMNS)
    assert out.height == 9
    assert out.select("metric", "variant").rows() == sorted(
        (m, v) for m in ("f1", "hit", "ndcg") for v in ("v1", "v2", "v3"))
    assert set(out["baseline"]) == {"base"} and out["family_size"].to_list() == [3] * 9


def test_matches_references_per_comparison():
    t = make_table()
    out = compare_variants(t, baseline="base", metrics=["hit", "ndcg"], resamples=500,
                           bootstrap_resamples=500)
    base = t.filter(pl.col("variant") == "base").sort("qid")
    for r in out.iter_rows(named=True):
        var = t.filter(pl.col("variant") == r["variant"]).sort("qid")
        a, b = var[r["metric"]].to_numpy(), base[r["metric"]].to_numpy()
        ref = sps.ttest_rel(a, b)
        assert r["p_ttest"] == pytest.approx(ref.pvalue, rel=1e-10)
        assert r["t_stat"] == pytest.approx(ref.statistic, rel=1e-10)
        d = a - b
        assert r["delta"] == pytest.approx(d.mean())
        assert r["d_z"] == pytest.approx(d.mean() / d.std(ddof=1))
        assert (r["wins"], r["ties"], r["losses"]) == ((d > 0).sum(), (d == 0).sum(), (d < 0).sum())
        assert r["relative_change"] == pytest.approx(d.mean() / b.mean())
        if r["metric"] == "hit":      # exact McNemar
            ref_p = sps.binomtest(r["wins"], r["wins"] + r["losses"]).pvalue
            assert r["p_value"] == pytest.approx(ref_p, rel=1e-9)
            assert r["p_method"] == "exact-grid" and r["resamples"] == 0
        else:
            assert r["p_method"] == "monte-carlo" and r["resamples"] >= 500
            assert r["p_value"] >= 1 / (r["resamples"] + 1)
        assert r["ci_low"] <= r["delta"] <= r["ci_high"]
    for metric in ("hit", "ndcg"):
        part = out.filter(pl.col("metric") == metric)
        assert part["p_adjusted"].to_numpy() == pytest.approx(
            adjust_pvalues(part["p_value"].to_numpy(), "holm"))
    assert out["significant"].to_list() == (out["p_adjusted"] <= 0.05).to_list()


def test_undefined_and_missing_are_excluded_counted_and_flagged():
    t = make_table(n=20, variants=("base", "v1", "v2"))
    t = t.with_columns(
        pl.when(pl.col("qid").is_in(["q000", "q001"])).then(None)       # both undefined
        .when((pl.col("variant") == "v2") & (pl.col("qid") == "q002")).then(float("nan"))
        .otherwise(pl.col("ndcg")).alias("ndcg"))
    t = t.filter(~((pl.col("variant") == "v1") & (pl.col("qid") == "q019")))   # missing row
    out = compare_variants(t, baseline="base", metrics=["ndcg", "hit"], resamples=200,
                           bootstrap_resamples=200)
    r = {(x["metric"], x["variant"]): x for x in out.iter_rows(named=True)}
    assert (r["ndcg", "v1"]["n_used"], r["ndcg", "v1"]["n_undefined"], r["ndcg", "v1"]["n_missing"]) == (17, 2, 1)
    assert r["ndcg", "v1"]["missingness_flag"]                        # missing row
    assert (r["ndcg", "v2"]["n_used"], r["ndcg", "v2"]["n_undefined"]) == (17, 3)
    assert r["ndcg", "v2"]["n_undefined_variant"] == 3 and r["ndcg", "v2"]["n_undefined_baseline"] == 2
    assert r["ndcg", "v2"]["missingness_flag"]
    assert not r["hit", "v2"]["missingness_flag"] and r["hit", "v2"]["n_used"] == 20
    # the pair is dropped for both members: means are over the same questions
    base = t.filter(pl.col("variant") == "base").sort("qid")["ndcg"].to_numpy()
    assert r["ndcg", "v2"]["mean_baseline"] == pytest.approx(np.nanmean(base[3:]))


def test_nan_pvalues_do_not_count_in_the_family():
    t = make_table(n=15, variants=("base", "v1", "v2"))
    t = t.with_columns(pl.when(pl.col("variant") == "v2").then(None)
                       .otherwise(pl.col("ndcg")).alias("ndcg"))
    out = compare_variants(t, baseline="base", metrics=["ndcg"], resamples=200,
                           bootstrap_resamples=200, correction="bonferroni")
    v1, v2 = out.row(0, named=True), out.row(1, named=True)
    assert v2["n_used"] == 0 and np.isnan(v2["p_value"]) and np.isnan(v2["p_adjusted"])
    assert v2["p_method"] == "none" and np.isnan(v2["ci_low"])
    assert not v2["significant"] and v1["family_size"] == 1
    assert v1["p_adjusted"] == pytest.approx(v1["p_value"])


def test_resamples_raised_to_reach_the_smallest_threshold():
    variants = ("base",) + tuple(f"v{i:02d}" for i in range(12))
    t = make_table(n=30, variants=variants)
    per = compare_variants(t, baseline="base", metrics=["ndcg"], resamples=100,
                           bootstrap_resamples=100)
    assert set(per["resamples"]) == {int(np.ceil(10 * 12 / 0.05)) - 1}
    both = compare_variants(t, baseline="base", metrics=["ndcg", "f1"], resamples=100,
                            bootstrap_resamples=100, family="all", correction="bonferroni")
    assert set(both["family_size"]) == {24}
    mc = both.filter(pl.col("p_method") == "monte-carlo")
    assert set(mc["resamples"]) == {int(np.ceil(10 * 24 / 0.05)) - 1}
    assert (1 / (mc["resamples"] + 1) <= 0.05 / 24).all()


def test_t_and_wilcoxon_options():
    t = make_table(n=30)
    out_t = compare_variants(t, baseline="base", metrics=["ndcg"], test="t",
                             bootstrap_resamples=200)
    assert out_t["p_value"].to_list() == out_t["p_ttest"].to_list()
    assert set(out_t["resamples"]) == {0}
    out_w = compare_variants(t, baseline="base", metrics=["ndcg"], test="wilcoxon",
                             bootstrap_resamples=200)
    base = t.filter(pl.col("variant") == "base").sort("qid")["ndcg"].to_numpy()
    v1 = t.filter(pl.col("variant") == "v1").sort("qid")["ndcg"].to_numpy()
    assert out_w["p_value"][0] == pytest.approx(sps.wilcoxon(v1 - base).pvalue)
    out_ci = compare_variants(t, baseline="base", metrics=["ndcg"], ci_method="t",
                              resamples=200)
    assert out_ci["ci_low"].to_list() == out_ci["t_ci_low"].to_list()


def test_deterministic_over_row_order_and_threads():
    t = make_table(n=60)
    kw = dict(baseline="base", metrics=["hit", "ndcg", "f1"], resamples=2000,
              bootstrap_resamples=2000, seed=11, cluster_col=None)
    ref = compare_variants(t, **kw)
    shuffled = t.sample(fraction=1.0, shuffle=True, seed=3)
    assert compare_variants(shuffled, **kw).equals(ref)
    with threadpool_limits(1):
        assert compare_variants(t, **kw).equals(ref)
    other = compare_variants(t, **{**kw, "seed": 12})
    assert not other["ci_low"].equals(ref["ci_low"])


def test_cluster_column_with_singletons_matches_plain():
    t = make_table(n=30).with_columns(("doc-" + pl.col("qid")).alias("doc"))
    kw = dict(baseline="base", metrics=["ndcg"], resamples=300, bootstrap_resamples=1000)
    plain = compare_variants(t, **kw)
    clustered = compare_variants(t, cluster_col="doc", **kw)
    assert clustered["ci_low"].to_list() == plain["ci_low"].to_list()
    assert clustered["ci_high"].to_list() == plain["ci_high"].to_list()


@pytest.mark.parametrize("change,match", [
    (dict(baseline="nope"), "baseline 'nope' is not a variant"),
    (dict(metrics=["missing"]), "no metric column 'missing'"),
    (dict(metrics=["qid"]), "not numeric"),
    (dict(test="anova"), "unknown test"),
    (dict(correction="sidak"), "unknown correction"),
    (dict(alpha=1.5), "alpha"),
    (dict(variant_col="system"), "no variant column 'system'"),
    (dict(family="some"), "unknown family"),
])
def test_bad_input_is_input_error(change, match):
    kw = dict(baseline="base", metrics=["ndcg"], resamples=100, bootstrap_resamples=100)
    with pytest.raises(InputError, match=match):
        compare_variants(make_table(n=5), **{**kw, **change})


def test_duplicate_rows_and_inconsistent_clusters_are_rejected():
    t = make_table(n=5)
    with pytest.raises(InputError, match="duplicate row for variant 'base'") as err:
        compare_variants(pl.concat([t, t.head(1)]), baseline="base", metrics=["ndcg"])
    assert err.value.field == "qid"
    t = t.with_columns(pl.col("variant").alias("doc"))
    with pytest.raises(InputError, match="more than one value in the cluster column"):
        compare_variants(t, baseline="base", metrics=["ndcg"], cluster_col="doc")


def test_only_baseline_gives_empty_table_with_schema():
    t = make_table(n=5, variants=("base",))
    out = compare_variants(t, baseline="base", metrics=["ndcg"])
    assert out.height == 0 and out.columns[:len(STATS_COLUMNS)] == list(STATS_COLUMNS)


def test_integer_qids_and_clusters():
    t = make_table(n=20).with_columns(
        pl.col("qid").str.slice(1).cast(pl.Int64),
        pl.when(pl.col("qid").str.slice(1).cast(pl.Int64) < 10)
        .then(pl.lit("docA")).otherwise(pl.col("qid")).alias("cluster"))
    out = compare_variants(t, baseline="base", metrics=["ndcg"], resamples=200,
                           bootstrap_resamples=500, cluster_col="cluster")
    plain = compare_variants(t, baseline="base", metrics=["ndcg"], resamples=200,
                             bootstrap_resamples=500)
    assert out["n_used"].to_list() == [20, 20, 20] and out["n_clusters"].to_list() == [11] * 3
    # ten questions in one cluster + ten singletons: a different (clustered) test and interval
    assert out["p_value"].to_list() != plain["p_value"].to_list()
    assert out["ci_low"].to_list() != plain["ci_low"].to_list()
    partly = t.with_columns(pl.when(pl.col("qid") < 10).then(pl.col("cluster")).alias("cluster"))
    with pytest.raises(InputError, match="empty value"):  # never a silent fall-back
        compare_variants(partly, baseline="base", metrics=["ndcg"], cluster_col="cluster")


