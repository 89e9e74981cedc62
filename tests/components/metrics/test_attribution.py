"""Failure buckets follow pipeline order."""

import pytest

from components.metrics.attribution import BUCKETS, failure_bucket


def fb(answerable=True, cand=True, top=True, prompt=True, correct=True, refused=False):
    return failure_bucket(answerable=answerable, in_candidates=cand, in_reranked_top=top,
                          in_prompt=prompt, correct=correct, refused=refused)


def test_answerable_buckets_in_pipeline_order():
    assert fb(cand=False, top=False, prompt=False) == "retrieval_miss"
    assert fb(top=False, prompt=False) == "ranking_loss"
    assert fb(prompt=False) == "budget_cut"
    assert fb(correct=False) == "generation_error"
    assert fb(correct=False, refused=True) == "generation_error"
    assert fb(refused=True) == "generation_error"  # a refusal is never ok
    assert fb() == "ok"


def test_earliest_loss_wins_even_when_answer_correct():
    assert fb(cand=False, top=False, prompt=False, correct=True) == "retrieval_miss"
    assert fb(prompt=False, correct=True) == "budget_cut"


def test_unanswerable_buckets_ignore_retrieval_flags():
    assert fb(answerable=False, cand=False, top=False, prompt=False, refused=True) == \
        "correct_refusal"
    assert fb(answerable=False, refused=False, correct=False) == "false_acceptance"


def test_inconsistent_flags_raise():
    with pytest.raises(ValueError):
        fb(cand=False, top=True, prompt=False)
    with pytest.raises(ValueError):
        fb(top=False, prompt=True)


def test_buckets_constant_lists_every_outcome():
    assert set(BUCKETS) == {"retrieval_miss", "ranking_loss", "budget_cut", "generation_error",
                            "ok", "correct_refusal", "false_acceptance"}
