"""Failure buckets follow pipeline order."""

import pytest

from ablate.components.metrics.attribution import BUCKETS, failure_bucket


def fb(answerable=True, cand=True, top=True, prompt=True, correct=True, refused=False):
    return failure_bucket(answerable=answerable, in_candidates=cand, in_reranked_top=top,
                          in_prompt=prompt, correct=correct, refused=refused)


def test_answerable_buckets_in_pipeline_order():
    assert fb(cand=False, top=False, prompt=False) == "retrieval_miss"
    assert fb(top=False, prompt=False) == "ranking_loss"
    assert fb(prompt=False) == "budget_cut"
    # issue 54: `answer_wrong`, not `generation_error` (the generator failing, as the
    # metric answer/generation_error says)
    assert fb(correct=False) == "answer_wrong"
    assert fb(correct=False, refused=True) == "answer_wrong"
    assert fb(refused=True) == "answer_wrong"  # a refusal is never ok
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
    assert set(BUCKETS) == {"no_evidence", "retrieval_miss", "ranking_loss", "budget_cut",
                            "partial_support", "answer_wrong", "ok", "correct_refusal",
                            "generation_error",
                            "false_acceptance", "retrieved", "unanswerable"}


def test_some_but_not_every_group_in_the_prompt_is_partial_support():
    """Multi-hop: one supporting passage in the prompt, the other cut or never retrieved;
    after the stages that lose every group, before generation (whatever the answer)."""
    def part(**kw):
        return failure_bucket(answerable=True, in_candidates=True, in_reranked_top=True,
                              in_prompt=True, refused=False, all_in_prompt=False, **kw)
    assert part(correct=True) == "partial_support"
    assert part(correct=False) == "partial_support"
    assert part(correct=False, answered=False) == "partial_support"
    assert failure_bucket(answerable=True, in_candidates=True, in_reranked_top=True,
                          in_prompt=False, correct=True, refused=False,
                          all_in_prompt=False) == "budget_cut"  # no group at all: the budget
    assert fb() == "ok"  # every group (the default) as before


def test_retrieval_only_buckets_by_retrieval_alone():
    def ro(**kw):
        return failure_bucket(**{**_flags(**kw), "correct": False, "refused": False},
                              answered=False)
    assert ro(cand=False, top=False, prompt=False) == "retrieval_miss"
    assert ro(top=False, prompt=False) == "ranking_loss"
    assert ro() == "retrieved"
    assert ro(prompt=False) == "budget_cut"  # the context is assembled without a generator too
    assert ro(answerable=False) == "unanswerable"
    assert failure_bucket(**_flags(), answered=False, has_evidence=False) == "no_evidence"


def test_generation_error_wins_over_every_other_bucket():
    for kw in ({}, {"cand": False, "top": False, "prompt": False}, {"answerable": False},
               {"correct": False, "refused": True}):
        assert failure_bucket(**_flags(**kw), error=True) == "generation_error", kw


def test_answerable_without_evidence_is_no_evidence_not_retrieval_miss():
    assert failure_bucket(**_flags(cand=False, top=False, prompt=False),
                          has_evidence=False) == "no_evidence"
    assert failure_bucket(**_flags(answerable=False, refused=True),
                          has_evidence=False) == "correct_refusal"


def test_closed_book_bucket_by_correctness_only():
    miss = _flags(cand=False, top=False, prompt=False)
    assert failure_bucket(**miss, context_used=False) == "ok"
    assert failure_bucket(**{**miss, "correct": False}, context_used=False) == "answer_wrong"
    assert failure_bucket(**{**miss, "refused": True}, context_used=False) == "answer_wrong"
    assert failure_bucket(**_flags(answerable=False, refused=False, correct=False),
                          context_used=False) == "false_acceptance"


def _flags(answerable=True, cand=True, top=True, prompt=True, correct=True, refused=False):
    return dict(answerable=answerable, in_candidates=cand, in_reranked_top=top,
                in_prompt=prompt, correct=correct, refused=refused)


def test_an_old_folders_generation_error_bucket_reads_as_what_it_meant():
    """Folders written before issue 54 called a wrong answer `generation_error`; read back,
    a row whose generator did not fail (answer/generation_error 0) is `answer_wrong`."""
    import polars as pl

    from ablate.components.metrics.attribution import current_buckets
    old = pl.DataFrame({"bucket": ["generation_error", "generation_error", "ok"],
                        "answer/generation_error": [0.0, 1.0, 0.0]})
    assert current_buckets(old)["bucket"].to_list() == ["answer_wrong", "generation_error", "ok"]
    assert current_buckets(old.drop("answer/generation_error"))["bucket"].to_list() == [
        "answer_wrong", "answer_wrong", "ok"]
    assert current_buckets(pl.DataFrame({"x": [1]})).columns == ["x"]
