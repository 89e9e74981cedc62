"""Gating a sweep against a stored reference on the same questions: non-inferiority by
default (pass only when the drop is shown to be below the allowance), `worse` by name."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from ablate.components.contract.errors import InputError
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


def test_a_drop_fails_and_names_the_questions(reference):
    worse = reference.per_query.with_columns(pl.col("final/recall_at_5") - 0.3)
    out = compare_to_reference(worse, "fp", reference, ["final/recall_at_5"], STATS,
                               max_drop=0.02)
    (r,) = out
    assert r.failed and r.verdict == "fail" and r.delta == pytest.approx(-0.3)
    assert len(r.worst) == 5 and all(d == pytest.approx(-0.3) for _, d in r.worst)
    assert r.n_used == 40 and r.variant == "baseline"
    md = reference_markdown(out, reference.label, "sweep-1", 0.02)
    assert "Gate FAILED" in md and "final/recall_at_5: FAIL, fell by 0.300" in md
    assert "the drop is larger than 0.02" in md and "questions whose final/recall_at_5 fell most" in md
    assert not compare_to_reference(worse, "fp", reference, ["final/recall_at_5"], STATS,
                                     max_drop=0.5)[0].failed


def test_direction_from_the_registry(reference):
    """A rise of a lower-is-better metric (cost) fails; a fall of it passes."""
    dearer = reference.per_query.with_columns(pl.col("cost/usd") + 0.2)
    cheaper = reference.per_query.with_columns(pl.col("cost/usd") - 0.2)
    assert compare_to_reference(dearer, "fp", reference, ["cost/usd"], STATS, max_drop=0.02)[0].failed
    assert not compare_to_reference(cheaper, "fp", reference, ["cost/usd"], STATS,
                                    max_drop=0.02)[0].failed


def test_unchanged_pipeline_passes(reference):
    (r,) = compare_to_reference(reference.per_query, "fp", reference, ["final/recall_at_5"], STATS,
                                max_drop=0.02)
    assert r.verdict == "pass" and not r.failed and r.delta == 0 and r.n == r.n_clusters == 40
    md = reference_markdown([r], reference.label, "sweep-1", 0.02)
    assert "Gate passed" in md and "| 40 (40) | pass |" in md


def test_a_noisy_small_reference_is_inconclusive_never_a_silent_pass(reference):
    """Noise of sd 0.3 with mean 0 on 40 questions: the bound cannot exclude 0.02, and
    the reference could not have: the gate says how many questions would."""
    rng = np.random.default_rng(4)
    noisy = reference.per_query.with_columns(
        pl.col("final/recall_at_5") + pl.Series(rng.normal(0, 0.3, 40)))
    (r,) = compare_to_reference(noisy, "fp", reference, ["final/recall_at_5"], STATS, max_drop=0.02)
    assert r.verdict == "inconclusive" and r.failed and r.margin_n > 0.02
    assert r.needed_n == np.ceil(40 * (r.margin_n / 0.02) ** 2)
    md = reference_markdown([r], reference.label, "sweep-1", 0.02)
    assert "Gate INCONCLUSIVE" in md and f"needs ~{int(r.needed_n)} questions" in md
    # the old rule passed it: no significant drop
    (old,) = compare_to_reference(noisy, "fp", reference, ["final/recall_at_5"], STATS,
                                  max_drop=0.02, rule="worse")
    assert old.verdict == "pass" and not old.significant
    assert "rule `worse`" in reference_markdown([old], reference.label, "s", 0.02)


def test_clusters_come_from_the_sweep_and_its_settings(reference):
    """The sweep's `cluster` column clusters both sides (a reference may predate it);
    stats.cluster none turns it off."""
    cur = reference.per_query.with_columns(cluster=pl.Series([f"doc{i // 4}" for i in range(40)]))
    (r,) = compare_to_reference(cur, "fp", reference, ["final/recall_at_5"], STATS, max_drop=0.02)
    assert r.n == 40 and r.n_clusters == 10
    (flat,) = compare_to_reference(cur, "fp", reference, ["final/recall_at_5"],
                                   {**STATS, "cluster": "none"}, max_drop=0.02)
    assert flat.n_clusters == 40


def test_a_zero_margin_is_a_one_line_error(reference):
    with pytest.raises(InputError, match="a drop of 0 can never be proven") as info:
        compare_to_reference(reference.per_query, "fp", reference, ["final/recall_at_5"], STATS,
                             max_drop=0.0)
    assert info.value.field == "--max-drop"


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
                             ["final/recall_at_5"], STATS, max_drop=0.02)
    assert info.value.field == "--reference"
