"""Failure attribution: one bucket per question, decided in pipeline order.

Every question, first:
  generation_error  the generator failed (timeout, HTTP error, no output after retries:
                    `Answer.error` set); there is no answer to judge, so this wins over
                    every other bucket and the failure stays visible
Answerable questions read with their context, first rule that applies:
  no_evidence       the data gives no evidence span, so retrieval cannot be judged
  retrieval_miss    no gold evidence among the fused candidates
  ranking_loss      among the candidates, but not in the reranked top (before the budget)
  budget_cut        in the reranked top, but dropped by the context token budget
  partial_support   some but not every evidence group in the prompt (multi-hop: one of
                    the supporting paragraphs missing), whatever the answer
  answer_wrong      gold evidence in the prompt, but the answer is wrong or refused
                    (called generation_error before issue 54, which named it after the
                    wrong thing: current_buckets reads old folders)
  ok                gold evidence in the prompt and the answer is correct
Because the order is the pipeline's, a correct answer given without gold evidence in
the prompt is still attributed to the stage that lost the evidence (it was not grounded).
Answerable questions of a generator that reads no context (closed book): by correctness
only, since retrieval never reached the generator: ok when correct, else
answer_wrong.
Unanswerable questions: correct_refusal or false_acceptance.
Without a generator (a retrieval-only study, `answered=False`) a question is bucketed by
retrieval alone: answerable ones as no_evidence, retrieval_miss, ranking_loss,
budget_cut (in the reranked top, dropped by the token budget), partial_support (some
but not every evidence group in the final context) or retrieved (every group in the
final context); unanswerable ones as unanswerable.
"""

from __future__ import annotations

from typing import Any

ANSWERABLE_BUCKETS = ("no_evidence", "retrieval_miss", "ranking_loss", "budget_cut",
                      "partial_support", "answer_wrong", "ok")
UNANSWERABLE_BUCKETS = ("correct_refusal", "false_acceptance")
RETRIEVAL_ONLY_BUCKETS = ("retrieved", "unanswerable")
FAILED = "generation_error"  # the generator failed: as the metric answer/generation_error
BUCKETS = ANSWERABLE_BUCKETS + UNANSWERABLE_BUCKETS + RETRIEVAL_ONLY_BUCKETS + (FAILED,)


def failure_bucket(*, answerable: bool, in_candidates: bool, in_reranked_top: bool,
                   in_prompt: bool, correct: bool, refused: bool, has_evidence: bool = True,
                   context_used: bool = True, error: bool = False, answered: bool = True,
                   all_in_prompt: bool = True) -> str:
    """The bucket of one question; `correct` follows metrics.answer.is_correct.

    `has_evidence`: the question has evidence groups; `context_used`: the generator read
    the assembled context (False: closed book, the stage flags are ignored); `error`: the
    generation failed; `answered`: False when the pipeline has no generator (retrieval
    only; `in_prompt` is then whether the evidence is in the assembled context);
    `all_in_prompt`: every evidence group is there (`in_prompt`: at least one). Raises
    ValueError for impossible flags (evidence in a later stage but not an earlier one),
    which would mean the caller computed the stages inconsistently.
    """
    if error:
        return FAILED
    if not answered:
        if not answerable:
            return "unanswerable"
        if not has_evidence:
            return "no_evidence"
        if not in_candidates:
            return "retrieval_miss"
        if not in_reranked_top:
            return "ranking_loss"
        if not in_prompt:
            return "budget_cut"
        return "retrieved" if all_in_prompt else "partial_support"
    if not answerable:
        return "correct_refusal" if refused else "false_acceptance"
    if not context_used:
        return "ok" if correct and not refused else "answer_wrong"
    if not has_evidence:
        return "no_evidence"
    if (in_reranked_top and not in_candidates) or (in_prompt and not in_reranked_top):
        raise ValueError(
            f"inconsistent stage flags: in_candidates={in_candidates}, "
            f"in_reranked_top={in_reranked_top}, in_prompt={in_prompt}")
    if not in_candidates:
        return "retrieval_miss"
    if not in_reranked_top:
        return "ranking_loss"
    if not in_prompt:
        return "budget_cut"
    if not all_in_prompt:
        return "partial_support"
    if refused or not correct:
        return "answer_wrong"
    return "ok"


def current_buckets(per_query: Any) -> Any:
    """A per-question table (polars) with the buckets of today: a folder written before
    issue 54 has `generation_error` for a wrong answer too; where the generator did not
    fail (answer/generation_error 0, or not recorded) it reads as `answer_wrong`."""
    import polars as pl
    if "bucket" not in per_query.columns:
        return per_query
    failed = (pl.col("answer/generation_error") == 1.0 if "answer/generation_error"
              in per_query.columns else pl.lit(False))
    return per_query.with_columns(
        pl.when((pl.col("bucket") == FAILED) & ~failed.fill_null(False))
        .then(pl.lit("answer_wrong")).otherwise(pl.col("bucket")).alias("bucket"))
