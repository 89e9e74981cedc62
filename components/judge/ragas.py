"""The built-in judged metrics: one `judged_metric` registration each
(ablate.components.metrics.judged), imported by ablate.components.catalogue.load().
docs/metrics.md#judged-metrics gives each definition beside RAGAS's and the differences.

- `judge/faithfulness`: supported claims / claims of the answer, against the context the
  generator read. The answer is split into claims (by the judge, or by sentence with
  `judge.claims: sentences`), then each claim is judged supported or not by that context.
  Undefined for a failed generation, a refusal or an empty answer, and for a generator
  that read no context (closed book). An empty context supports no claim: every claim is
  unsupported, by definition, without asking.
- `judge/answer_relevancy`, as RAGAS defines it: the judge writes
  `judge.relevancy_questions` questions from the answer alone (the question is not shown)
  and says whether the answer is noncommittal; the score is the mean cosine similarity of
  the generated questions with the question, by the `judge.embedder` model, and 0 for a
  noncommittal answer. A refusal or an empty answer is noncommittal by definition: 0
  without asking, answerable question or not. Undefined for a failed generation. The
  cosines are computed in the judge stage and kept in the judgment (with the questions),
  so the scoring needs no model and the judgment is cached with the stage, whose key
  holds the embedder's identity.
- `judge/addresses_question`: the judge's rating of whether the answer addresses the
  question: yes 1, partly 0.5, no 0 (what `answer_relevancy` measured before it followed
  RAGAS). Undefined for a failed generation, a refusal or an empty answer.
- `judge/context_precision`: each of the first `judge.max_passages` passages of the
  assembled context, in prompt order, judged useful or not for the reference answer (the
  question's first gold answer); sum over ranks k of precision@k x v_k, divided by the
  number of useful passages (0 when none is useful). Undefined without a reference answer
  (unanswerable questions) or without passages.
- `judge/context_recall`: the reference answer's sentences each judged supported or not
  by the assembled context, with the question beside them; supported / all. A short-span
  reference (SQuAD-style, `case.reference_form`: one sentence without a sentence end, or
  of fewer than 4 words) is one statement, so the metric is whether the context supports
  (in practice: contains) that answer; the judgment says which form applied
  (`reference_form`). Undefined without a reference answer; an empty context supports
  nothing, by definition, without asking.
"""

from __future__ import annotations

from typing import Any

from ablate.components.generation.prompt import format_context
from ablate.components.judge.case import (
    Asking,
    Case,
    Judgment,
    ok,
    reference_form,
    sentences,
    undefined,
)
from ablate.components.metrics.judged import (
    SCORES,
    judged_metric,
    mean_cosine,
    rank_weighted_precision,
    share_yes,
)


def supported(case: Case, claims: list[str]) -> Judgment | Asking:
    """Whether each claim is supported by the context the generator read."""
    read = case.generator_context
    if read is None or not read.passages:
        return ok(["no"] * len(claims), claims=claims, reason="empty context: nothing is supported")
    text = format_context(read)
    return Asking(tuple(case.ask("support", statement=c, context=text) for c in claims),
                  then=lambda verdicts: ok(verdicts, claims=claims))


@judged_metric("faithfulness", score=lambda j: share_yes(j["verdicts"]),
               description="claims of the answer supported by the context it read / claims (judged)",
               reads=("judge.claims",), calibration="support", order=1)
def faithfulness(case: Case) -> Judgment | Asking:
    why = case.answer_problem
    if why is not None:
        return undefined(why)
    if case.generator_context is None:
        return undefined("closed book: no context read")
    answer = case.answer.text  # type: ignore[union-attr]  # answer_problem: there is one
    if case.cfg.claims == "sentences":
        return supported(case, sentences(answer)[:case.cfg.max_claims])
    return Asking((case.ask("claims", answer=answer.strip()),),
                  then=lambda verdicts: supported(case, verdicts[0]), at="claims")


@judged_metric("answer_relevancy", score=mean_cosine,
               description="RAGAS answer relevancy: mean cosine (judge.embedder) of questions the judge "
                           "writes from the answer with the question; 0 for a noncommittal answer or a "
                           "refusal (judged)",
               reads=("judge.relevancy_questions", "judge.embedder"), embeds=True, order=2,
               low=-1.0, version="2")
def answer_relevancy(case: Case) -> Judgment | Asking:
    a = case.answer
    if a is None or a.error is not None:
        return undefined(case.answer_problem or "no answer")
    if a.refused or not a.text.strip():
        return ok([], noncommittal=True, reason="refusal or empty answer: noncommittal, 0 by definition")
    question = case.question.question.strip()

    def scored(verdicts: list[Any]) -> Judgment:
        got = verdicts[0]
        return ok(got["questions"], noncommittal=got["noncommittal"],
                  cosines=case.cosines(question, got["questions"]))
    return Asking((case.ask("questions", answer=a.text.strip(),
                            n_questions=case.cfg.relevancy_questions),), then=scored)


@judged_metric("addresses_question", score=lambda j: SCORES[j["verdicts"][0]],
               description="the judge's rating of whether the answer addresses the question: yes 1, "
                           "partly 0.5, no 0 (judged; not RAGAS answer relevancy)",
               calibration="relevance", order=3)
def addresses_question(case: Case) -> Judgment | Asking:
    why = case.answer_problem
    if why is not None:
        return undefined(why)
    return Asking((case.ask("relevance", answer=case.answer.text.strip()),))  # type: ignore[union-attr]


@judged_metric("context_precision",
               score=lambda j: rank_weighted_precision([v == "yes" for v in j["verdicts"]]),
               description="rank-weighted share of context passages useful for the reference answer (judged)",
               reads=("judge.max_passages",), calibration="usefulness", order=4)
def context_precision(case: Case) -> Judgment | Asking:
    reference = case.reference
    if not reference:
        return undefined("no reference answer")
    passages = case.passages
    if not passages:
        return undefined("no passages")
    return Asking(tuple(case.ask("usefulness", passage=p.text.strip(), reference=reference)
                        for p in passages[:case.cfg.max_passages]))


@judged_metric("context_recall", score=lambda j: share_yes(j["verdicts"]),
               description="sentences of the reference answer supported by the context / sentences "
                           "(judged); a short-span reference (SQuAD-style) is one statement: whether "
                           "the context contains that answer",
               calibration="support", order=5)
def context_recall(case: Case) -> Judgment | Asking:
    reference = case.reference
    if not reference:
        return undefined("no reference answer")
    form = reference_form(reference)
    claims = sentences(reference)[:case.cfg.max_claims]
    if not case.passages:
        return ok(["no"] * len(claims), claims=claims, reference_form=form,
                  reason="empty context: nothing is supported")
    text = format_context(case.context)  # type: ignore[arg-type]  # it has passages
    return Asking(tuple(case.ask("support", statement=c, context=text) for c in claims),
                  then=lambda verdicts: ok(verdicts, claims=claims, reference_form=form))
