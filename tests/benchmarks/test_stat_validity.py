"""The small version of benchmarks/stat_validity.py runs in CI: every method's type-I
error and coverage stay near their targets on clustered data, and "significant" never
disagrees with the default interval. Tolerances are binomial (R = 200 per rate), loose
enough not to flake, tight enough to catch question-level tests on clustered data (their
type-I error there is about 0.4)."""

from __future__ import annotations

import math

from tests.benchmarks.bench_module import load


def _load():
    return load("stat_validity")


def test_quick_validity_table(capsys):
    out = _load().main(["--quick", "--resamples", "999"])
    se = math.sqrt(0.05 * 0.95 / 200)
    for r in out["methods"]:
        assert r["type_I"] <= 0.05 + 4 * se, r
        assert r["coverage"] >= 0.95 - 4 * se, r
        if r["ci"] == "inversion":
            assert r["agree"] == 1.0, r
        assert r["power"] > 0.4, r
    for r in out["corrections"]:
        assert r["fwer"] <= 0.05 + 4 * math.sqrt(0.05 * 0.95 / r["families"]), r
    assert out["sequential_validity"], "the sequential rows are part of the table"
    for r in out["sequential_validity"]:
        assert r["type_I"] <= 0.05 + 4 * se, r
    assert out["gate_validity"], "the gate rows are part of the table"
    for r in out["gate_validity"]:
        assert r["type_I"] <= 0.05 + 4 * se and r["power"] > 0.5, r
        assert r["old_rule_type_I"] > 0.3, r  # what the old gate let through
    # issue 38: 0/1 metrics at a true drop equal to the margin pass at most alpha / 3
    assert out["gate_validity_binary_rows"], "the 0/1 gate rows are part of the table"
    for r in out["gate_validity_binary_rows"]:
        assert r["type_I"] <= 0.05 / 3 + 4 * math.sqrt(0.05 / 3 / 200), r
    assert "Tests and intervals" in capsys.readouterr().out
