"""The small version of benchmarks/self_test_validity.py: the self-test's rule flags the
CR1 t with one document holding 40 % of the questions (liberal: about 0.13 at alpha 0.05)
in most sweeps, and a valid test on 16 equal documents in almost none."""

from __future__ import annotations

from tests.benchmarks.bench_module import load

SWEEPS = 30


def _load():
    return load("self_test_validity")


def test_the_self_test_flags_a_liberal_test_and_spares_a_valid_one():
    mod = _load()
    dominant = mod.cell_row(mod.CELLS[2], SWEEPS, 1000, seed=1)
    assert dominant["tests"]["CR1 t"]["flagged"] >= 0.6, dominant
    assert dominant["tests"]["CR2 t"]["flagged"] <= 2 / SWEEPS, dominant
    valid = mod.cell_row(mod.CELLS[0], SWEEPS, 1000, seed=1)
    assert valid["tests"]["sign-flip"]["flagged"] <= 2 / SWEEPS, valid
    assert valid["cannot_tell"] == 0.0
