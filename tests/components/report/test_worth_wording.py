"""The interaction of two changes is read by its sign and the metric's direction (issue 54:
two harmful changes with a positive interaction read "together worth more")."""

from __future__ import annotations

import polars as pl

from ablate.components.report.worth import worth_section
from ablate.components.stats.worth_table import WORTH_SCHEMA


def _worth(metric: str, a: float, b: float, inter: float) -> pl.DataFrame:
    base = {"metric": metric, "ci_level": 0.975, "ci_method": "t", "p_value": 0.001,
            "p_adjusted": 0.002, "significant": True, "full_minus_empty": a + b + inter,
            "n": 100, "n_clusters": 20, "n_excluded": 0, "family_size": 2,
            "test": "permutation", "correction": "holm"}
    rows = [{**base, "factor": "retrieval.paths", "kind": "shapley", "level": "bm25",
             "value": a + inter / 2, "ci_low": a - 0.1, "ci_high": a - 0.01},
            {**base, "factor": "rerank.method", "kind": "shapley", "level": "none",
             "value": b + inter / 2, "ci_low": b - 0.1, "ci_high": b - 0.01},
            {**base, "factor": "retrieval.paths × rerank.method", "kind": "interaction",
             "level": "", "value": inter, "ci_low": inter - 0.02, "ci_high": inter + 0.02}]
    return pl.DataFrame(rows, schema=WORTH_SCHEMA)


def _pairs_line(metric: str, a: float, b: float, inter: float) -> str:
    lines = worth_section(_worth(metric, a, b, inter), [metric])
    return next(ln for ln in lines if ln.startswith("Interacting pairs: "))


def test_two_harmful_changes_that_overlap_are_not_worth_more_together():
    line = _pairs_line("final/recall_at_5", -0.08, -0.06, 0.05)
    assert "worth more" not in line
    assert "together better than their separate effects add up to" in line
    line = _pairs_line("final/recall_at_5", -0.08, -0.06, -0.05)
    assert "together worse than their separate effects add up to" in line


def test_a_lower_is_better_metric_reads_the_sign_the_other_way():
    line = _pairs_line("latency/generate", 0.2, 0.1, 0.05)  # more seconds together: worse
    assert "together worse than their separate effects add up to" in line
