"""P10, the worst tenth of questions: the nearest-rank rule, its orientation by the
metric's direction, and stats.parquet's p10 columns over exactly the questions the means use."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from ablate.components.stats import compare_variants
from ablate.components.stats.tails import TAIL, lower_is_better, worst_tenth, worst_tenth_of


def test_nearest_rank_on_hand_values():
    assert TAIL == 0.1
    # k = ceil(n / 10): the k-th smallest defined value, always a score some question has
    assert worst_tenth_of(np.arange(1.0, 11.0)) == 1.0           # n 10: k 1
    assert worst_tenth_of(np.arange(1.0, 12.0)) == 2.0           # n 11: k 2
    assert worst_tenth_of(np.arange(1.0, 21.0)) == 2.0           # n 20: k 2
    assert worst_tenth_of(np.arange(21.0, 0.0, -1.0)) == 3.0     # n 21: k 3, order irrelevant
    assert worst_tenth_of(np.array([0.7])) == 0.7                # one question: its score
    # a 0/1 metric: 0 exactly when at least a tenth of the questions score 0
    assert worst_tenth_of(np.array([0.0] + [1.0] * 9)) == 0.0
    assert worst_tenth_of(np.array([0.0] + [1.0] * 10)) == 1.0


def test_lower_is_better_takes_the_top_tenth():
    assert worst_tenth_of(np.arange(1.0, 12.0), lower=True) == 10.0  # the 2nd largest of 11


def test_orientation_from_the_metric_and_a_slices_column():
    assert lower_is_better("tokens/in") and lower_is_better("refusal/false_acceptance")
    assert not lower_is_better("answer/f1") and not lower_is_better("plugin/unknown")
    # report.slices widen a key metric into one column per slice: its metric's direction
    assert lower_is_better("refusal/false_acceptance @slice type=yesno")


def test_undefined_values_are_left_out_and_none_left_is_nan():
    x = np.array([np.nan, 0.2, np.inf, 0.9, -np.inf, 0.5])
    assert worst_tenth_of(x) == 0.2
    assert math.isnan(worst_tenth_of(np.array([np.nan, np.inf])))
    assert math.isnan(worst_tenth_of(np.array([])))


def test_columns_with_a_mask():
    values = np.array([[1.0, 5.0], [2.0, 6.0], [3.0, 7.0]])
    mask = np.array([[False, True], [True, True], [True, False]])
    out = worst_tenth(values, mask, np.array([False, True]))
    assert out.tolist() == [2.0, 6.0]  # column 0: {2, 3} -> 2; column 1 (lower): {5, 6} -> 6
    assert np.isnan(worst_tenth(values, np.zeros_like(mask), np.array([False, False]))).all()


def test_stats_rows_have_p10_over_the_paired_questions():
    n = 25
    base = np.linspace(0.0, 1.0, n)
    var = base[::-1].copy()
    var[0] = np.nan   # undefined for the variant: that question leaves both p10s, as both means
    base_col = base.copy()
    base_col[3] = np.nan
    t = pl.DataFrame({"variant": ["base"] * n + ["v"] * n, "qid": [f"q{i}" for i in range(n)] * 2,
                      "final/recall_at_5": np.concatenate([base_col, var]),
                      "tokens/in": np.concatenate([np.arange(n), np.arange(n) * 2.0])})
    out = compare_variants(t, baseline="base", metrics=["final/recall_at_5", "tokens/in"],
                           resamples=200, bootstrap_resamples=200)
    rows = {r["metric"]: r for r in out.iter_rows(named=True)}
    used = ~(np.isnan(base_col) | np.isnan(var))
    r = rows["final/recall_at_5"]
    assert r["mean_variant"] == pytest.approx(var[used].mean())
    assert r["p10_variant"] == worst_tenth_of(var[used])
    assert r["p10_baseline"] == worst_tenth_of(base_col[used])
    # tokens in: lower is better, so the worst tenth is the top of the distribution
    tok = rows["tokens/in"]
    assert tok["p10_baseline"] == worst_tenth_of(np.arange(n) * 1.0, lower=True) == 22.0
    assert tok["p10_variant"] == 44.0
