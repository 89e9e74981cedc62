"""Refusal outcomes over a whole set, with their denominators."""

import math

import pytest

from ablate.components.metrics.refusal import refusal_summary


def test_refusal_summary_hand_made():
    # q1 answerable answered right, q2 answerable answered wrong, q3 answerable refused,
    # q4 unanswerable refused, q5 unanswerable answered.
    answerable = [True, True, True, False, False]
    refused = [False, False, True, True, False]
    correct = [True, False, False, True, True]  # q5's flag is ignored: answered unanswerable is wrong
    s = refusal_summary(answerable, refused, correct)
    assert s["answer_coverage"] == pytest.approx(3 / 5)
    assert s["false_acceptance"] == pytest.approx(1 / 2)
    assert s["false_refusal"] == pytest.approx(1 / 3)
    assert s["answer_risk"] == pytest.approx(2 / 3)
    assert (s["n"], s["n_answerable"], s["n_unanswerable"], s["n_answered"]) == (5, 3, 2, 3)


def test_undefined_rates_are_nan():
    s = refusal_summary([True, True], [True, True], [False, False])
    assert s["answer_coverage"] == 0.0 and s["false_refusal"] == 1.0
    assert math.isnan(s["false_acceptance"]) and math.isnan(s["answer_risk"])


def test_length_mismatch_raises():
    with pytest.raises(ValueError):
        refusal_summary([True], [True, False], [True])
