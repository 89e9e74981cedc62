"""The anytime-valid drop rule over a series of runs (components/stats/monitor.py): a drop
it catches, a stable series where it stays quiet, its level by a small simulation, and
the difference between runs on fresh questions and runs on shared ones."""

from __future__ import annotations

import numpy as np
import pytest

from ablate.components.stats.monitor import (
    RunPoint,
    drop_z,
    eprocess_fresh,
    eprocess_shared,
    first_alarm,
)


def points(means, se=0.01):
    return [RunPoint(m, se) for m in means]


def test_z_is_the_shortfall_below_reference_minus_margin_in_standard_errors():
    z = drop_z(points([0.85, 0.80, 0.83]), reference=0.85, margin=0.02)
    assert z == pytest.approx([-2.0, 3.0, 0.0])


def test_a_sustained_drop_is_caught_by_the_fresh_e_process():
    # five runs at the reference, then ten 3 standard errors past the margin
    z = drop_z(points([0.85] * 5 + [0.80] * 10), reference=0.85, margin=0.02)
    alarm = first_alarm(eprocess_fresh(z), alpha=0.05)
    assert alarm is not None and 5 <= alarm <= 8


def test_a_large_drop_is_caught_by_the_shared_rule_at_once():
    z = drop_z(points([0.85] * 5 + [0.77] * 3), reference=0.85, margin=0.02)
    assert first_alarm(eprocess_shared(z), alpha=0.05) == 5


def test_a_stable_series_stays_quiet():
    wiggle = [0.0, 0.01, -0.01, 0.005, -0.005, 0.012, -0.012, 0.0, 0.008, -0.008]
    z = drop_z(points([0.85 + w for w in wiggle * 6]), reference=0.85, margin=0.02)
    assert first_alarm(eprocess_fresh(z), alpha=0.05) is None
    assert first_alarm(eprocess_shared(z), alpha=0.05) is None


def test_fresh_e_process_keeps_its_level_over_60_looks():
    # the null at its boundary: every run's estimate centred at reference - margin, fresh noise
    rng = np.random.default_rng(5)
    reps, alpha = 2000, 0.05
    alarms = sum(first_alarm(eprocess_fresh(rng.normal(0, 1, 60)), alpha) is not None
                 for _ in range(reps))
    naive = sum(bool((rng.normal(0, 1, 60) > 1.645).any()) for _ in range(reps))
    assert alarms / reps <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / reps)
    assert naive / reps > 0.5  # looking every night at alpha: a false alarm is near certain


def test_shared_rule_keeps_its_level_when_every_run_repeats_the_same_error():
    # questions shared by every run: one error for the whole series (the worst dependence)
    rng = np.random.default_rng(6)
    reps, alpha = 2000, 0.05
    shared = [first_alarm(eprocess_shared(np.full(60, e)), alpha) is not None
              for e in rng.normal(0, 1, reps)]
    fresh = [first_alarm(eprocess_fresh(np.full(60, e)), alpha) is not None
             for e in rng.normal(0, 1, reps)]
    assert np.mean(shared) <= alpha
    assert np.mean(fresh) > 2 * alpha  # the fresh rule's independence matters


def test_bad_points_are_refused():
    with pytest.raises(ValueError, match="standard error"):
        drop_z([RunPoint(0.8, 0.0)], reference=0.85, margin=0.0)
    with pytest.raises(ValueError, match="finite"):
        drop_z([RunPoint(float("nan"), 0.01)], reference=0.85, margin=0.0)
