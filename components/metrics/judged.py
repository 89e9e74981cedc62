"""Judged metrics (RAGAS definitions), computed from the judge stage's verdicts.

- `judge/faithfulness`: supported claims / claims of the answer (context the generator read);
- `judge/answer_relevancy`: does the answer address the question: yes 1, partly 0.5, no 0;
- `judge/context_precision`: rank-weighted usefulness of the context passages for the
  reference answer, as in RAGAS: sum over ranks k of precision@k x v_k, divided by the
  number of useful passages (0 when none is useful), v_k = 1 when passage k is useful;
- `judge/context_recall`: the reference answer's sentences supported by the context / all.

A judgment that is undefined (refusal, closed book, no reference answer: see
components/judge/run.py) or failed (a judge failure) gives NaN: excluded from the
statistics and counted, never 0 or 1. Without a judge (`view.judgments` is None) these
metrics are skipped; a judged metric the judge config leaves out gives no column.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from ablate.components.judge.tasks import SCORES
from ablate.components.metrics.registry import QuestionView, metric


def share_yes(verdicts: Sequence[str]) -> float:
    """Share of `yes` verdicts (NaN for none)."""
    return sum(v == "yes" for v in verdicts) / len(verdicts) if verdicts else math.nan


def rank_weighted_precision(useful: Sequence[bool]) -> float:
    """RAGAS context precision of a ranked list of usefulness verdicts (NaN for none)."""
    if not useful:
        return math.nan
    hits = 0
    total = 0.0
    for k, u in enumerate(useful, 1):
        if u:
            hits += 1
            total += hits / k  # precision@k, counted where v_k = 1
    return total / hits if hits else 0.0


def _ok(view: QuestionView, name: str) -> Mapping[str, Any] | None | bool:
    """The judgment when usable; None when undefined or failed; False when not judged."""
    j = (view.judgments or {}).get(name)
    if j is None:
        return False
    return j if j.get("status") == "ok" else None


def _judged(name: str, score, description: str) -> None:
    def compute(view: QuestionView) -> dict[str, float]:
        j = _ok(view, name)
        if j is False:
            return {}
        return {f"judge/{name}": math.nan if j is None else score(j)}
    compute.__module__ = __name__
    metric(name, stages=("judge",), direction="higher", 
           description=description)(compute)


_judged("faithfulness", lambda j: share_yes(j["verdicts"]),
        "claims of the answer supported by the context it read / claims (judged)")
_judged("answer_relevancy", lambda j: SCORES[j["verdicts"][0]],
        "the answer addresses the question: yes 1, partly 0.5, no 0 (judged)")
_judged("context_precision", lambda j: rank_weighted_precision([v == "yes" for v in j["verdicts"]]),
        "rank-weighted share of context passages useful for the reference answer (judged)")
_judged("context_recall", lambda j: share_yes(j["verdicts"]),
        "sentences of the reference answer supported by the context / sentences (judged)")
