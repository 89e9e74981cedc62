"""Minimum detectable effect against statsmodels' power solver."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.power import TTestPower

from ablate.components.stats.power import mde, mde_dz, ttest_power
from tests.fresh import imported_after


@pytest.mark.parametrize("n,alpha", [(10, 0.05), (50, 0.05), (200, 0.01), (1000, 0.05)])
def test_mde_matches_statsmodels(n, alpha):
    ref = TTestPower().solve_power(effect_size=None, nobs=n, alpha=alpha, power=0.8,
                                   alternative="two-sided")
    assert mde_dz(n, alpha) == pytest.approx(ref, rel=1e-4)
    assert ttest_power(mde_dz(n, alpha), n, alpha) == pytest.approx(0.8, abs=1e-8)


def test_mde_scales_with_sd_and_is_nan_when_undefined():
    out = mde(np.array([50, 50, 1, 50]), np.array([0.2, 0.4, 0.3, 0.0]), 0.05)
    assert out[1] == pytest.approx(2 * out[0])
    assert np.isnan(out[2]) and np.isnan(out[3])


def test_power_stays_finite_for_large_effects():
    # scipy's nct.cdf returns NaN for a vanishing lower tail; must not break the solver
    for n in (116, 500, 2000):
        assert np.isfinite(ttest_power(0.79, n, 0.05))
        assert np.isfinite(mde_dz(n, 0.05))


def test_default_comparison_imports_no_scipy_stats():
    """The permutation test's analysis (t CIs, exact sign-flip grid, MDE) uses scipy.special
    only: neither scipy.stats nor scipy.optimize is imported on its way."""
    code = ("import numpy as np, polars as pl\n"
            "from ablate.components.stats import compare_variants\n"
            "rng = np.random.default_rng(0)\n"
            "t = pl.DataFrame({'variant': ['baseline'] * 40 + ['v'] * 40,\n"
            "                  'qid': [str(i) for i in range(40)] * 2,\n"
            "                  'm': np.r_[rng.random(40), rng.integers(0, 2, 40)]})\n"
            "out = compare_variants(t, baseline='baseline', metrics=['m'], resamples=200,\n"
            "                       bootstrap_resamples=200)\n"
            "assert out['p_value'].is_not_null().all() and out['mde'].is_not_null().all()")
    assert imported_after(code, ("scipy.stats", "scipy.optimize")) == []
