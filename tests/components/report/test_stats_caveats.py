"""The report says what the verdicts cannot promise (issue 38, items 2 and 4)."""

from __future__ import annotations

import polars as pl

from ablate.components.report.findings import warnings
from ablate.components.report.stats_caveats import error_rates_text


def _stats(**over) -> pl.DataFrame:
    row = {"metric": "final/recall_at_5", "variant": "v", "n_used": 1000, "n_clusters": 50,
           "n_changed_clusters": 3, "ci_flag": "few_changed_clusters", "clustered_by": "cluster",
           "significant": False, "mde": 0.01, "delta": 0.0, "wins": 2, "losses": 2,
           "ci_low": -0.00455, "ci_high": 0.00435}
    row.update(over)
    return pl.DataFrame([row])


def test_few_changed_clusters_is_a_finding_naming_k_and_g():
    out = warnings(_stats(), ["final/recall_at_5"], [], {"statistics": {"alpha": 0.05}})
    text = " ".join(out)
    assert "Few changed clusters" in text and "k 3 of 50" in text


def test_two_documents_cannot_reject_and_say_so():
    st = _stats(n_clusters=2, n_changed_clusters=2, ci_flag="", mde=float("nan"))
    text = " ".join(warnings(st, ["final/recall_at_5"], [],
                             {"statistics": {"alpha": 0.05, "test": "permutation"}}))
    assert "Cannot reject at alpha 0.05 with 2 clusters" in text and "2/2^2 = 0.5" in text


def test_the_table_wide_familywise_error_and_the_symmetry_assumption_are_stated():
    stats = pl.concat([_stats(), _stats(metric="final/ndcg_at_10"), _stats(metric="answer/f1")])
    text = error_rates_text({"alpha": 0.05, "family": "per_metric"}, stats)
    assert "at most 0.15" in text and "3 metric families" in text
    assert "symmetric" in text


def test_few_changed_finding_says_whether_the_interval_was_widened():
    # a 0/1 metric: the interval was widened by the Tango bound (ci_method +tango), so it
    # is not "too narrow"; a graded metric's is not widened and the finding says so
    widened = " ".join(warnings(_stats(ci_method="signflip-inversion+tango"),
                                ["final/recall_at_5"], [], {"statistics": {"alpha": 0.05}}))
    assert "Tango" in widened and "too narrow" not in widened
    graded = " ".join(warnings(_stats(ci_method="signflip-inversion"),
                               ["final/recall_at_5"], [], {"statistics": {"alpha": 0.05}}))
    assert "too narrow" in graded and "Tango" not in graded


def test_an_interval_bounded_as_if_questions_were_independent_says_so():
    """Issue 56, item 4: with too few documents for the cluster-robust Tango bound a side
    is bounded as if the questions were independent; the finding says it."""
    st = _stats(n_clusters=6, n_changed_clusters=1, ci_method="signflip-inversion+tango",
                ci_flag="few_changed_clusters; few_documents_iid_tango")
    text = " ".join(warnings(st, ["final/recall_at_5"], [], {"statistics": {"alpha": 0.05}}))
    assert "as if its questions were independent" in text and "6 clusters" in text
