"""The risk-coverage table: raising the refusal threshold over the answers' confidence
withholds low-confidence answers; coverage falls and the accuracy of answers rises."""

from __future__ import annotations

import math

import polars as pl
import pytest

from ablate.components.report.risk_coverage import (
    RISK,
    risk_coverage,
    risk_coverage_plot,
    risk_coverage_section,
)


def _per_query() -> pl.DataFrame:
    # 10 questions: 6 answerable (confidence 0.9 .. 0.4, the 3 most confident correct),
    # 4 unanswerable answered at low confidence (0.35 .. 0.2), and one refused
    rows = []
    for i in range(6):
        rows.append({"variant": "baseline", "qid": f"a{i}", "answerable": True,
                     "answer/refused": 0.0, "answer/correct": float(i < 3),
                     "confidence": 0.9 - 0.1 * i})
    for i in range(3):
        rows.append({"variant": "baseline", "qid": f"u{i}", "answerable": False,
                     "answer/refused": 0.0, "answer/correct": 0.0, "confidence": 0.35 - 0.05 * i})
    rows.append({"variant": "baseline", "qid": "u3", "answerable": False, "answer/refused": 1.0,
                 "answer/correct": 1.0, "confidence": 0.1})
    return pl.DataFrame(rows)


def test_a_higher_threshold_trades_coverage_for_accuracy():
    t = risk_coverage(_per_query())
    first, last = t.row(0, named=True), t.row(-1, named=True)
    assert first["answered"] == 9 and first["coverage"] == pytest.approx(0.9)
    assert first["accuracy_answered"] == pytest.approx(3 / 9)
    assert first["false_acceptance"] == pytest.approx(3 / 4)
    assert first["accuracy_overall"] == pytest.approx((3 + 1) / 10)
    assert t["coverage"].to_list() == sorted(t["coverage"].to_list(), reverse=True)
    assert last["false_acceptance"] == 0.0 and last["accuracy_answered"] == 1.0
    assert last["accuracy_overall"] > first["accuracy_overall"]


def test_no_confidence_no_rows_and_no_section():
    pq = _per_query().with_columns(pl.lit(math.nan).alias("confidence"))
    assert risk_coverage(pq).height == 0
    assert risk_coverage_section(pq) == [] and risk_coverage_plot(pq) == {}
    assert risk_coverage(_per_query().drop("confidence")).height == 0


def test_section_has_plot_and_table():
    lines = risk_coverage_section(_per_query(), [RISK])
    assert lines[0] == "## Refusal: risk and coverage"
    assert f"plots/{RISK}" in "\n".join(lines)
    assert any(x.startswith("| baseline | ") and "9 of 10" in x for x in lines)
    assert risk_coverage_plot(_per_query())[RISK].startswith(b"<?xml")
