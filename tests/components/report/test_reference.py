"""Gating a sweep against a stored reference on the same questions."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from ablate.components.errors import InputError
from ablate.components.report.reference import Reference, compare_to_reference, reference_markdown

STATS = {"test": "permutation", "correction": "holm", "alpha": 0.05, "resamples": 2000,
         "bootstrap_resamples": 500, "ci_method": "bca"}


def _frame(recall, latency, qids=None):
    n = len(recall)
    return pl.DataFrame({"variant": ["baseline"] * n, "qid": qids or [f"q{i:02d}" for i in range(n)],
                         "final/recall_at_5": recall, "cost/usd": latency})


@pytest.fixture
def reference():
    rng = np.random.default_rng(0)
    return Reference(_frame(rng.uniform(0.5, 1, 40).tolist(), rng.uniform(0, 1, 40).tolist()),
                     "fp", "refs/good")


def test_a_significant_drop_fails_and_names_the_questions(reference):
    worse = reference.per_query.with_columns(pl.col("final/recall_at_5") - 0.3)
    out = compare_to_reference(worse, "fp", reference, ["final/recall_at_5"], STATS)
    (r,) = out
    assert r.failed and r.delta == pytest.approx(-0.3) and len(r.worst) == 5
    assert all(d == pytest.approx(-0.3) for _, d in r.worst)
    md = reference_markdown(out, reference.label, "sweep-1", 0.0)
    assert "Gate FAILED" in md and "final/recall_at_5 fell by 0.300" in md
    assert not compare_to_reference(worse, "fp", reference, ["final/recall_at_5"], STATS,
                                     max_drop=0.5)[0].failed


def test_direction_from_the_registry(reference):
    """A rise of a lower-is-better metric (cost) fails; a fall of it passes."""
    dearer = reference.per_query.with_columns(pl.col("cost/usd") + 0.2)
    cheaper = reference.per_query.with_columns(pl.col("cost/usd") - 0.2)
    assert compare_to_reference(dearer, "fp", reference, ["cost/usd"], STATS)[0].failed
    assert not compare_to_reference(cheaper, "fp", reference, ["cost/usd"], STATS)[0].failed


def test_unchanged_pipeline_passes(reference):
    (r,) = compare_to_reference(reference.per_query, "fp", reference, ["final/recall_at_5"], STATS)
    assert not r.failed and not r.significant and r.delta == 0


@pytest.mark.parametrize("change, message", [
    ({"fingerprint": "other"}, "another data set"),
    ({"qids": True}, "other questions"),
])
def test_other_data_or_questions_is_a_clear_error(reference, change, message):
    cur = reference.per_query
    if change.get("qids"):
        cur = cur.with_columns(pl.col("qid") + "x")
    with pytest.raises(InputError, match=message) as info:
        compare_to_reference(cur, change.get("fingerprint", "fp"), reference,
                             ["final/recall_at_5"], STATS)
    assert info.value.field == "--reference"
