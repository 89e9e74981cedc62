"""Failure attribution: one bucket per question, decided in pipeline order.

Answerable questions, first rule that applies:
  retrieval_miss    no gold evidence among the fused candidates
  ranking_loss      among the candidates, but not in the reranked top (before the budget)
  budget_cut        in the reranked top, but dropped by the context token budget
  generation_error  gold evidence in the prompt, but the answer is wrong or refused
  ok                gold evidence in the prompt and the answer is correct
Because the order is the pipeline's, a correct answer given without gold evidence in
the prompt is still attributed to the stage that lost the evidence (it was not grounded).
Unanswerable questions: correct_refusal or false_acceptance.
"""

from __future__ import annotations

ANSWERABLE_BUCKETS = ("retrieval_miss", "ranking_loss", "budget_cut", "generation_error", "ok")
UNANSWERABLE_BUCKETS = ("correct_refusal", "false_acceptance")
BUCKETS = ANSWERABLE_BUCKETS + UNANSWERABLE_BUCKETS


def failure_bucket(*, answerable: bool, in_candidates: bool, in_reranked_top: bool,
                   in_prompt: bool, correct: bool, refused: bool) -> str:
    """The bucket of one question; `correct` follows metrics.answer.is_correct.

    Raises ValueError for impossible flags (evidence in a later stage but not an earlier
    one), which would mean the caller computed the stages inconsistently.
    """
    if not answerable:
        return "correct_refusal" if refused else "false_acceptance"
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
    if refused or not correct:
        return "generation_error"
    return "ok"
