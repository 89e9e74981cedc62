"""Answer consistency has no paired test against the baseline (its 1 is fixed by
definition, so the p-value would only count changed answers): the metric is declared
relative and left out of the compared columns; its rate is reported with an interval that
treats a cluster of questions as one unit, against the baseline's run-to-run agreement."""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from ablate.components.metrics.consistency import COLUMN
from ablate.components.metrics.registry import compared
from ablate.components.report.findings import findings
from ablate.components.stats.consistency import (
    clustered_interval,
    consistency_rates,
    reference_of,
)


def test_the_consistency_column_is_not_compared_with_the_baseline():
    assert not compared(COLUMN)
    assert compared("answer/f1") and compared("final/recall_at_5") and compared("plugin/own")


def _per_query() -> pl.DataFrame:
    # 12 questions in 4 clusters of 3; the perturbation changes the answers of cluster c0
    qids = [f"q{i}" for i in range(12)]
    clusters = [f"c{i // 3}" for i in range(12)]
    typo = [0.0] * 3 + [1.0] * 9
    return pl.DataFrame({"variant": ["baseline"] * 12 + ["typo"] * 12 + ["casing"] * 12,
                         "qid": qids * 3, "cluster": clusters * 3,
                         COLUMN: [1.0] * 12 + typo + [1.0] * 11 + [math.nan]})


def test_rates_by_hand():
    rates = consistency_rates(_per_query(), "baseline")
    assert rates["variant"].to_list() == ["typo", "casing"]
    typo, casing = rates.row(0, named=True), rates.row(1, named=True)
    assert (typo["n"], typo["clusters"], typo["changed"], typo["rate"]) == (12, 4, 3, 0.75)
    assert (casing["n"], casing["changed"], casing["rate"]) == (11, 0, 1.0)
    assert casing["ci_high"] == 1.0 and 0.3 < casing["ci_low"] < 0.6  # 4 clusters: wide
    # the 3 changes share one cluster: the interval is that of far fewer than 12 answers
    _, low_iid, high_iid = clustered_interval([0.0] * 3 + [1.0] * 9, list(range(12)))
    assert typo["ci_low"] < low_iid and typo["ci_high"] >= high_iid


def test_rate_one_counts_clusters_not_questions():
    n_eff, low, high = clustered_interval([1.0] * 100, [i // 10 for i in range(100)])
    assert n_eff == 10 and high == 1.0 and low == (0.025) ** (1 / 10)  # Clopper-Pearson, x = n


def test_the_clustered_interval_covers_at_the_stated_level():
    rng = np.random.default_rng(5)
    covered, runs, g, m, mean, icc = 0, 400, 40, 5, 0.8, 0.3
    a = mean * (1 - icc) / icc
    b = (1 - mean) * (1 - icc) / icc
    for _ in range(runs):
        p = rng.beta(a, b, g)
        y = (rng.random((g, m)) < p[:, None]).astype(float).ravel().tolist()
        _, low, high = clustered_interval(y, [i // m for i in range(g * m)])
        covered += low <= mean <= high
    assert covered / runs >= 0.92  # question-level Clopper-Pearson covers ~0.8 here


def test_the_reference_is_the_baselines_run_to_run_agreement():
    assert reference_of({"generator": {"name": "extractive"}})[0] == 1.0
    assert reference_of({"generator": {"name": "smollm2", "temperature": 0.0}})[0] == 1.0
    ref, why = reference_of({"generator": {"name": "smollm2", "temperature": 0.7}})
    assert math.isnan(ref) and "not measured" in why
    assert "may still vary" in reference_of({"generator": {"name": "openai"}})[1]


def test_the_reference_reads_the_generator_registry():
    """A plugin generator registered deterministic is read as such at any temperature;
    the generator names are the registry's, not a list in the statistics (issue 43.3)."""
    from ablate.components.generation.base import GENERATORS
    from tests.conftest import registries_restored
    with registries_restored():
        GENERATORS.register("lookup_43", deterministic=True)(lambda cfg, prompt: None)
        ref, why = reference_of({"generator": {"name": "lookup_43", "temperature": 0.9}})
    assert ref == 1.0 and "deterministic" in why
    ref, _ = reference_of({"generator": {"name": "smollm2", "temperature": 0.9}})
    assert math.isnan(ref)


def test_findings_report_the_rate_and_no_paired_test():
    stats = pl.DataFrame({"metric": [COLUMN], "variant": ["typo"], "delta": [-0.25],
                          "ci_low": [-0.5], "ci_high": [-0.1], "p_adjusted": [0.01],
                          "significant": [True], "mde": [0.1], "wins": [0], "losses": [3],
                          "n_used": [12], "missingness_flag": [False]})
    variants = [{"name": "baseline", "config": {"generator": {"name": "extractive"}}}]
    text = " ".join(findings(stats, ["answer/f1", COLUMN], variants=variants,
                             per_query=_per_query()))
    assert "lowers" not in text  # no sentence from the paired test of the 1s
    assert "typo 0.750 [" in text and "(3 of 12 answers changed, 4 clusters)" in text
    assert "Reference 1, the baseline's run-to-run agreement (the extractive generator is " \
           "deterministic)" in text
    assert "No p-value" in text
