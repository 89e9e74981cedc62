"""The small version of benchmarks/worth_rare_changes.py: on a 0/1 metric where few of
50 questions change, each worth interval covers its true value (0.009-0.023) at least
0.95 of the time at its level 0.9875, where the t interval alone (the intervals before
issue 56) covered 0.30-0.80."""

from __future__ import annotations

from tests.benchmarks.bench_module import load

REPS = 60


def _load():
    return load("worth_rare_changes")


def test_worth_intervals_cover_rare_changes_on_a_binary_metric():
    mod = _load()
    row = mod.design_row(mod.DESIGNS[1], REPS, seed=2)
    k = mod.K
    assert abs(row["level"][0] - (1 - 0.05 / 4)) < 1e-12
    assert (row["cover"] >= 0.95).all(), row
    assert row["before"][:k].min() < 0.85, row  # so this test can see a lost widening
