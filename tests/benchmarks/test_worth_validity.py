"""The small version of benchmarks/worth_validity.py: on 20 clusters of 25 questions (ICC
0.5) the worth intervals keep their coverage and the estimates have no bias. Tolerances
are binomial (4 standard errors at 500 replicates); intervals that ignored the clusters
cover far less there (so this test can catch a lost cluster unit)."""

from __future__ import annotations

import math

from tests.benchmarks.bench_module import load

REPS = 500


def _load():
    return load("worth_validity")


def test_worth_intervals_cover_on_clustered_questions():
    mod = _load()
    row = mod.scenario_row(mod.SCENARIOS[2], REPS, seed=3, resamples=500)
    se = math.sqrt(0.05 * 0.95 / REPS)
    assert row["sv_family_cover"] >= 0.95 - 4 * se and row["ii_family_cover"] >= 0.95 - 4 * se, row
    assert row["sv_cover"] >= 0.95 - 4 * se and row["ii_cover"] >= 0.95 - 4 * se, row
    assert abs(row["sv_max_bias"]) < 0.02 and abs(row["ii_max_bias"]) < 0.02, row
