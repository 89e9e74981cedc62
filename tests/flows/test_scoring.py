"""Refusal indicators: their means over a set are the refusal rates of that set."""

from __future__ import annotations

import math

from components.metrics.refusal import refusal_summary
from components.metrics.builtin import refusal_indicators


def nanmean(xs):
    xs = [x for x in xs if not math.isnan(x)]
    return sum(xs) / len(xs) if xs else math.nan


def test_indicator_means_equal_refusal_summary():
    answerable = [True, True, True, False, False, True]
    refused = [False, True, False, False, True, False]
    correct = [True, False, False, False, True, True]
    rows = [refusal_indicators(a, r, c) for a, r, c in zip(answerable, refused, correct)]
    summary = refusal_summary(answerable, refused, correct)
    for name in ("answer_coverage", "false_acceptance", "false_refusal", "answer_risk"):
        assert math.isclose(nanmean([r[f"refusal/{name}"] for r in rows]), summary[name]), name


def test_undefined_outside_denominator():
    row = refusal_indicators(answerable=True, refused=True, correct=False)
    assert math.isnan(row["refusal/false_acceptance"]) and math.isnan(row["refusal/answer_risk"])
    assert row["refusal/false_refusal"] == 1.0 and row["refusal/answer_coverage"] == 0.0
