"""Corrections against R's p.adjust (published values) and statsmodels multipletests."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from ablate.components.contract.errors import InputError
from ablate.components.stats.correction import adjust_pvalues, resamples_needed, smallest_threshold

# Benjamini & Hochberg (1995), section 4: the 15 p-values of the myocardial infarction
# study. At q = 0.05 BH rejects 4 hypotheses, Bonferroni 3.
BH95 = [0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459,
        0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.0000]


def test_published_bh_example():
    assert (adjust_pvalues(BH95, "bh") <= 0.05).sum() == 4
    assert (adjust_pvalues(BH95, "bonferroni") <= 0.05).sum() == 3


def test_r_p_adjust_values():
    # R: p.adjust(c(0.01, 0.02, 0.03, 0.04, 0.05), m)
    p = [0.01, 0.02, 0.03, 0.04, 0.05]
    assert adjust_pvalues(p, "holm") == pytest.approx([0.05, 0.08, 0.09, 0.09, 0.09])
    assert adjust_pvalues(p, "bh") == pytest.approx([0.05] * 5)
    assert adjust_pvalues(p, "bonferroni") == pytest.approx([0.05, 0.1, 0.15, 0.2, 0.25])
    assert adjust_pvalues(p, "by") == pytest.approx([0.11416667] * 5, rel=1e-6)
    assert adjust_pvalues(p, "none") == pytest.approx(p)


def test_nan_stays_nan_and_is_not_counted():
    # R: p.adjust(c(0.01, NA, 0.04), "bonferroni") -> 0.02 NA 0.08
    out = adjust_pvalues([0.01, np.nan, 0.04], "bonferroni")
    assert out[0] == pytest.approx(0.02) and np.isnan(out[1]) and out[2] == pytest.approx(0.08)
    out = adjust_pvalues([np.nan, 0.04, 0.01], "holm")
    assert np.isnan(out[0]) and list(out[1:]) == pytest.approx([0.04, 0.02])
    assert np.isnan(adjust_pvalues([np.nan, np.nan], "bh")).all()


@pytest.mark.parametrize("ours,theirs", [("holm", "holm"), ("bonferroni", "bonferroni"),
                                         ("bh", "fdr_bh"), ("by", "fdr_by")])
@pytest.mark.parametrize("seed", range(3))
def test_matches_statsmodels(ours, theirs, seed):
    rng = np.random.default_rng(seed)
    p = np.concatenate([rng.uniform(0, 0.02, 5), rng.uniform(0, 1, 20), [0.01, 0.01]])
    rng.shuffle(p)
    ref = multipletests(p, alpha=0.05, method=theirs)[1]
    assert adjust_pvalues(p, ours) == pytest.approx(ref, rel=1e-12)


def test_unknown_method_is_input_error():
    with pytest.raises(InputError, match="known: bh, bonferroni, by, holm"):
        adjust_pvalues([0.1], "sidak")


def test_resamples_reach_the_smallest_threshold():
    assert smallest_threshold("holm", 300, 0.05) == pytest.approx(0.05 / 300)
    assert smallest_threshold("by", 3, 0.05) == pytest.approx(0.05 / (3 * (1 + 1/2 + 1/3)))
    for method in ("holm", "bonferroni", "bh", "by", "none"):
        b = resamples_needed(method, 300, 0.05, resolution=1.0)
        assert 1 / (b + 1) <= smallest_threshold(method, 300, 0.05)
        assert 1 / b > smallest_threshold(method, 300, 0.05)
