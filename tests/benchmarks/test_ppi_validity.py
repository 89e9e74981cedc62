"""The small version of benchmarks/ppi_validity.py: the judge-corrected paired difference
keeps its coverage and type-I error where the raw judged difference fails, is never much
wider than the labelled-only interval, and the label planner's half-width is reached.
Tolerances are binomial (R = 500 per rate); the same check on an estimator whose variance
omits the rectifier term fails (so this test can catch a broken variance)."""

from __future__ import annotations

import math

from tests.benchmarks.bench_module import load

SE = math.sqrt(0.05 * 0.95 / 500)


def _load():
    return load("ppi_validity")


def _valid(r: dict) -> bool:
    return r["ppi_cover"] >= 0.95 - 4 * SE and r["ppi_type_I"] <= 0.05 + 4 * SE


def test_quick_ppi_validity_table(capsys):
    out = _load().main(["--quick"])
    assert len(out["scenarios"]) == 3
    for r in out["scenarios"]:
        assert _valid(r), r
        assert r["classic_cover"] >= 0.95 - 4 * SE and r["mean_cover"] >= 0.95 - 4 * SE, r
        assert r["ppi_width"] <= 1.05 * r["classic_width"], r
        assert r["undefined"] == 0.0, r
        if "biased" in r["scenario"] or "vary" in r["scenario"]:
            assert r["raw_cover"] < 0.8 and r["raw_type_I"] > 0.2, r  # what PPI corrects
    for p in out["planner"]:
        assert abs(p["x2_achieved_hw"] / p["x2_predicted_hw"] - 1) < 0.1, p
        assert p["feasible"] >= 0.5 and p["planned_labels"] > p["pilot_labels"], p
        assert abs(p["achieved_hw"] / p["target_hw"] - 1) < 0.2, p
    assert "Label planner" in capsys.readouterr().out


def test_a_variance_without_the_rectifier_term_fails_the_check(monkeypatch):
    mod = _load()
    from ablate.components.stats import ppi
    monkeypatch.setattr(ppi, "_influence_sums", lambda parts, lam: lam * parts.F)
    row = mod.scenario_row(mod.SCENARIOS[mod.QUICK[0]], 500, 0)
    assert not _valid(row), row
