"""Refusal outcomes over a whole question set (selective-answering view).

answer_coverage  = answered / all
false_acceptance = answered / unanswerable      (NaN when there is no unanswerable question)
false_refusal    = refused / answerable         (NaN when there is no answerable question)
answer_risk      = wrong / answered             (NaN when nothing was answered)

An answered unanswerable question counts as wrong for answer_risk, whatever `correct`
says. Denominators are returned too (n, n_answerable, n_unanswerable, n_answered) so a
report can show them beside the rates.
"""

from __future__ import annotations

import math
from typing import Sequence


def _rate(num: int, den: int) -> float:
    return num / den if den else math.nan


def refusal_summary(answerable: Sequence[bool], refused: Sequence[bool],
                    correct: Sequence[bool]) -> dict[str, float]:
    """Coverage, false acceptance, false refusal and risk from per-question flags."""
    if not (len(answerable) == len(refused) == len(correct)):
        raise ValueError(f"lengths differ: answerable={len(answerable)}, "
                         f"refused={len(refused)}, correct={len(correct)}")
    n = len(answerable)
    n_ans = sum(1 for a in answerable if a)
    n_unans = n - n_ans
    answered = [not r for r in refused]
    n_answered = sum(answered)
    accepted_unans = sum(1 for a, d in zip(answerable, answered) if d and not a)
    refused_ans = sum(1 for a, r in zip(answerable, refused) if a and r)
    wrong_answered = sum(1 for a, d, c in zip(answerable, answered, correct)
                         if d and (not a or not c))
    return {
        "answer_coverage": _rate(n_answered, n),
        "false_acceptance": _rate(accepted_unans, n_unans),
        "false_refusal": _rate(refused_ans, n_ans),
        "answer_risk": _rate(wrong_answered, n_answered),
        "n": float(n),
        "n_answerable": float(n_ans),
        "n_unanswerable": float(n_unans),
        "n_answered": float(n_answered),
    }
