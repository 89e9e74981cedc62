"""The factorial section states the joint error of its two families: the comparisons with
the baseline (stats.parquet) and the design's effects (factorial.parquet) are corrected
separately, each at alpha, so over both the error is bounded by 2 x alpha (union bound)."""

from __future__ import annotations

from ablate.components.report.factorial import factorial_section, joint_error
from tests.components.report.test_factorial_section import MANIFEST, VARIANTS


def _section(**stats):
    man = {**MANIFEST, "statistics": {**MANIFEST["statistics"], **stats}}
    return "\n".join(factorial_section(man, VARIANTS, None, ["answer/f1"]))


def test_the_section_states_the_joint_error_of_both_families():
    text = _section(alpha=0.05)
    assert "**Joint error.**" in text
    assert "corrected separately, each at alpha 0.05" in text
    assert "at most 2 × 0.05 = 0.1 (union bound)" in text
    assert "stats.alpha 0.025" in text  # how to hold both together at 0.05


def test_the_bound_names_the_family_and_the_error_rate():
    assert "of one metric" in joint_error({"alpha": 0.05, "correction": "holm",
                                           "family": "per_metric"})
    assert "of every metric" in joint_error({"alpha": 0.05, "correction": "holm", "family": "all"})
    fdr = joint_error({"alpha": 0.1, "correction": "bh", "family": "per_metric"})
    assert "false discovery rate" in fdr and "at most 2 × 0.1 = 0.2" in fdr
    none = joint_error({"alpha": 0.05, "correction": "none", "family": "per_metric"})
    assert "uncorrected" in none and "union bound" not in none
