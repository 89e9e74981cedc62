"""The small version of benchmarks/alert_validity.py: stable nightly series at the null's
boundary keep the anytime rules' false-alarm rate at alpha (the `shared` rule on runs over
shared questions, both rules on fresh questions), while the naive rule (each night at
alpha) and the `fresh` rule on shared questions do not; a large drop is found. Tolerances
are binomial (3 standard errors at the replicates run)."""

from __future__ import annotations

import math

from tests.benchmarks.bench_module import load

REPS, ALPHA = 300, 0.05


def _tol() -> float:
    return ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / REPS)


def test_false_alarms_of_stable_series():
    mod = load("alert_validity")
    shared = mod.null_row(mod.DESIGNS["shared"], REPS, nights=60, alpha=ALPHA, seed=1)
    fresh = mod.null_row(mod.DESIGNS["fresh"], REPS, nights=60, alpha=ALPHA, seed=2)
    assert shared["anytime_shared"] <= _tol(), shared
    assert fresh["anytime_shared"] <= _tol() and fresh["anytime_fresh"] <= _tol(), fresh
    assert fresh["naive"] > 0.5, fresh            # 60 looks at alpha: near-certain
    assert shared["naive"] > 2 * ALPHA, shared
    assert shared["anytime_fresh"] > 2 * ALPHA, shared   # its independence is needed


def test_a_large_drop_is_found_soon():
    mod = load("alert_validity")
    row = mod.delay_row(mod.DESIGNS["shared"], 100, nights=60, alpha=ALPHA, seed=3,
                        drop_at=20, delta=0.10)
    assert row["found_shared"] >= 0.9 and row["median_delay_shared"] <= 3, row
    assert row["alarms_before_drop_shared"] <= 0.05, row


def test_quick_main_prints_every_row(capsys):
    mod = load("alert_validity")
    out = mod.main(["--quick", "--reps", "40"])
    text = capsys.readouterr().out
    assert len(out["null"]) == len(mod.DESIGNS) and len(out["delay"]) >= 2
    assert "## False alarms" in text and "## Detection" in text
