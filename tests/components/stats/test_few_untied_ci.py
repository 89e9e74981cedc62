"""With fewer than 10 differing pairs a bootstrap CI option is replaced by the inverted
sign-flip test, so it never excludes 0 beside a sign-flip p above alpha (the bootstrap /
BCa did: demo smoke tier, retrieval.paths=bm25 on final/ndcg_at_10, CI [0.012, 0.105]
beside p = 0.5, W/T/L 3/20/1)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from ablate.components.stats import compare_variants
from ablate.components.stats.inference import FLAG_FEW_UNTIED, MIN_UNTIED_FOR_BOOTSTRAP
from ablate.components.stats.inversion import FLAG_UNBOUNDED


def _table(diffs_by_variant: dict[str, list[float]], n: int, base: float = 0.3) -> pl.DataFrame:
    rows = [("baseline", f"q{i:02d}", base) for i in range(n)]
    for v, diffs in diffs_by_variant.items():
        rows += [(v, f"q{i:02d}", base + (diffs[i] if i < len(diffs) else 0.0)) for i in range(n)]
    return pl.DataFrame(rows, schema=["variant", "qid", "m"], orient="row")


@pytest.mark.parametrize("ci_method", ["bca", "percentile"])
def test_ci_agrees_with_the_signflip_test_when_few_pairs_differ(ci_method):
    rng = np.random.default_rng(7)
    variants = {
        "demo": [0.5, 0.4, 0.45, -0.15],               # W/T/L 3/20/1: BCa gave [2e-18, 0.13]
        "six": [0.2, 0.3, 0.25, 0.1, -0.05, 0.15],     # p = 0.0625: BCa gave [0.012, 0.085]
        "nine": [0.3, 0.2, 0.1, 0.4, 0.2, 0.3, -0.1, 0.25, -0.05],  # p = 0.023: rejects
    }
    for j in range(60):  # random small cases, 1..9 differing pairs, skewed to one side
        m = int(rng.integers(1, MIN_UNTIED_FOR_BOOTSTRAP))
        d = np.round(rng.normal(0.1, 0.2, m), 3)
        variants[f"r{j:02d}"] = [x if x != 0 else 0.001 for x in d]
    out = compare_variants(_table(variants, 24), baseline="baseline", metrics=["m"],
                           ci_method=ci_method, resamples=1000, bootstrap_resamples=2000,
                           correction="none")
    checked = 0
    for r in out.iter_rows(named=True):
        assert r["ci_method"] == "signflip-inversion", r["variant"]
        assert r["ci_flag"].startswith(FLAG_FEW_UNTIED)
        bounded = not math.isnan(r["ci_low"]) and not math.isnan(r["ci_high"])
        assert bounded == (FLAG_UNBOUNDED not in r["ci_flag"])
        if bounded:
            assert r["ci_low"] <= r["delta"] <= r["ci_high"]
            excludes_zero = r["ci_low"] > 0 or r["ci_high"] < 0
            assert excludes_zero == (r["p_value"] <= 0.05), r["variant"]
            checked += 1
        else:
            assert r["p_value"] > 0.05
    assert checked > 10
    rows = {r["variant"]: r for r in out.iter_rows(named=True)}
    assert rows["demo"]["p_value"] == pytest.approx(0.25)
    assert rows["demo"]["ci_low"] < 0 < rows["demo"]["ci_high"]  # ties shift too: bounded
    assert rows["six"]["ci_low"] < 0 < rows["six"]["ci_high"]
    assert rows["nine"]["ci_low"] > 0 and rows["nine"]["p_value"] < 0.05


def test_ten_or_more_differing_pairs_keep_the_bootstrap():
    d = [0.3, 0.2, 0.1, 0.4, 0.2, 0.3, -0.1, 0.25, -0.05, 0.15]
    out = compare_variants(_table({"v": d}, 30), baseline="baseline", metrics=["m"],
                           bootstrap_resamples=1000, ci_method="bca").row(0, named=True)
    assert out["ci_method"] == "bca" and out["ci_flag"] == ""


def test_all_tied_is_a_zero_interval():
    out = compare_variants(_table({"v": []}, 12), baseline="baseline", metrics=["m"],
                           bootstrap_resamples=500).row(0, named=True)
    assert out["delta"] == 0 and out["ci_low"] == 0 and out["ci_high"] == 0
    assert out["p_value"] == 1.0
