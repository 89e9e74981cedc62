"""The plain alert rules on hand-made series (components/stats/alert_rules.py): a threshold
with its interval, N consecutive declines, a failed gate, and the drop rule."""

from __future__ import annotations

import pytest

from ablate.components.stats.alert_rules import declines, drop, failed_gate, threshold
from ablate.components.stats.monitor import RunPoint


def test_threshold_alerts_when_the_whole_interval_is_below():
    f = threshold([RunPoint(0.85, 0.01), RunPoint(0.75, 0.01)], below=0.8, alpha=0.05)
    assert f.level == "alert" and f.run == 1
    assert "faithfulness" not in f.message and "0.8" in f.message


def test_threshold_warns_when_only_the_mean_is_below():
    f = threshold([RunPoint(0.79, 0.03)], below=0.8, alpha=0.05)
    assert f.level == "warn" and f.run == 0


def test_threshold_uses_the_recorded_upper_bound_when_given():
    assert threshold([RunPoint(0.79, 0.03, upper=0.795)], below=0.8, alpha=0.05).level == "alert"


def test_threshold_is_quiet_above():
    assert threshold([RunPoint(0.82, 0.01)], below=0.8, alpha=0.05).level == "ok"


def test_three_declines_in_a_row_alert():
    f = declines([RunPoint(m, 0.01) for m in (0.90, 0.88, 0.87, 0.86)], n=3)
    assert f.level == "alert" and f.run == 3 and "3" in f.message


def test_an_interrupted_run_of_declines_is_quiet():
    assert declines([RunPoint(m, 0.01) for m in (0.90, 0.88, 0.89, 0.87)], n=3).level == "ok"
    assert declines([RunPoint(m, 0.01) for m in (0.90, 0.88, 0.88, 0.87)], n=3).level == "ok"
    assert declines([RunPoint(m, 0.01) for m in (0.90, 0.88)], n=3).level == "ok"


def test_a_failed_gate_alerts_and_a_passed_one_does_not():
    assert failed_gate([True, False]).level == "alert"
    assert failed_gate([False, True]).level == "ok"
    assert failed_gate([]).level == "ok"


def test_drop_rule_reports_the_first_alarm_and_its_e_value():
    series = [RunPoint(0.85, 0.01)] * 5 + [RunPoint(0.80, 0.01)] * 10
    f = drop(series, margin=0.02, reference=0.85, alpha=0.05, questions="fresh")
    assert f.level == "alert" and 5 <= f.run <= 8 and "e-value" in f.message


def test_drop_rule_without_a_reference_measures_from_the_first_run():
    series = [RunPoint(0.85, 0.01)] + [RunPoint(0.77, 0.01)] * 3
    assert drop(series, margin=0.02, reference=None, alpha=0.05, questions="shared").level == "alert"


def test_drop_rule_quiet_on_a_stable_series():
    series = [RunPoint(0.85 + (0.01 if i % 2 else -0.01), 0.01) for i in range(60)]
    for q in ("fresh", "shared"):
        assert drop(series, margin=0.02, reference=0.85, alpha=0.05, questions=q).level == "ok"


def test_drop_rule_not_anytime_tests_each_run_alone():
    series = [RunPoint(0.85, 0.01), RunPoint(0.80, 0.01)]
    f = drop(series, margin=0.02, reference=0.85, alpha=0.05, questions="shared", anytime=False)
    assert f.level == "alert" and f.run == 1


@pytest.mark.parametrize("rule", [threshold, declines, drop])
def test_an_empty_series_is_quiet(rule):
    kwargs = {threshold: {"below": 0.8, "alpha": 0.05}, declines: {"n": 3},
              drop: {"margin": 0.02, "reference": None, "alpha": 0.05, "questions": "fresh"}}[rule]
    assert rule([], **kwargs).level == "ok"
