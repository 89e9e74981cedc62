"""Group-sequential looks: the Lan–DeMets O'Brien–Fleming boundaries match published
values, and under the null the chance of ever rejecting over all looks stays at alpha
(simulation over many seeds), while a real effect is stopped early."""

from __future__ import annotations

import numpy as np
import pytest

from ablate.components.stats.sequential import boundaries, look_sizes, run_looks, spent


def test_boundaries_match_the_published_lan_demets_obrien_fleming_values():
    # four equally spaced looks, two-sided alpha 0.05 (Jennison & Turnbull 2000, table 7.6;
    # gsDesign / rpact give 4.333, 2.963, 2.359, 2.014)
    c = boundaries((0.25, 0.5, 0.75, 1.0), 0.05)
    assert c == pytest.approx((4.333, 2.963, 2.359, 2.014), abs=2e-3)
    assert boundaries((1.0,), 0.05) == pytest.approx((1.95996,), abs=1e-4)


def test_spending_adds_up_to_alpha():
    assert spent(1.0, 0.05) == pytest.approx(0.05)
    assert spent(0.5, 0.05) < spent(0.75, 0.05) < 0.05


def _rejects(rng, n, batch, alpha, effect, binary):
    if binary:  # per-question differences of a 0/1 metric: -1, 0, +1
        d = rng.choice([-1.0, 0.0, 1.0], size=n, p=[0.15 - effect / 2, 0.7, 0.15 + effect / 2])
    else:
        d = rng.normal(effect, 1.0, n)
    return run_looks(d, look_sizes(n, batch), alpha)[-1].decided


@pytest.mark.parametrize("binary", [False, True])
def test_type_one_error_stays_at_alpha_under_repeated_looks(binary):
    rng = np.random.default_rng(20261201)
    sims = 3000
    rate = np.mean([_rejects(rng, 300, 50, 0.05, 0.0, binary) for _ in range(sims)])
    # se of a rate of 0.05 over 3000 runs is 0.004; six naive looks at 0.05 would give ~0.12
    assert rate <= 0.05 + 0.01, rate
    naive = np.mean([any(abs(np.mean(d[:n]) / (np.std(d[:n], ddof=1) / np.sqrt(n))) >= 1.96
                         for n in look_sizes(300, 50))
                     for d in (rng.normal(0, 1, 300) for _ in range(1000))])
    assert naive > 0.08  # the problem the boundaries solve


def test_a_real_effect_stops_early():
    rng = np.random.default_rng(3)
    stops = [len(run_looks(rng.normal(0.5, 1.0, 300), look_sizes(300, 50), 0.05)) for _ in range(200)]
    assert np.median(stops) <= 2  # d_z 0.5: decided after 50-100 of the 300 questions


def test_look_sizes():
    assert look_sizes(300, 50) == [50, 100, 150, 200, 250, 300]
    assert look_sizes(320, 50) == [50, 100, 150, 200, 250, 320]
    assert look_sizes(340, 50) == [50, 100, 150, 200, 250, 300, 340]
    assert look_sizes(30, 50) == [30]
