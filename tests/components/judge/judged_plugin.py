"""A judged metric in one file and one registration, as a plugin would add it (loaded by
tests/components/judge/test_judged_metric.py inside registries_restored()).

`judge/answer_support`: is the answer supported by the reference answer (the `support`
task, the reference as the context): yes 1, no 0. Undefined for a refusal, an empty or
failed answer, and without a reference answer."""

from __future__ import annotations

from ablate.components.judge.case import Asking, undefined
from ablate.components.metrics.judged import SCORES, judged_metric


@judged_metric("answer_support", score=lambda j: SCORES[j["verdicts"][0]],
               description="the reference answer supports the answer (judged)",
               calibration="support")
def answer_support(case):
    why = case.answer_problem
    if why is not None:
        return undefined(why)
    if not case.reference:
        return undefined("no reference answer")
    return Asking((case.ask("support", statement=case.answer.text.strip(),
                            context=f"[1] {case.reference}"),))
