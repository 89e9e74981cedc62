"""An example plugin: a metric, `answer/contains_gold`.

1 when the answer contains a reference answer after SQuAD normalisation (the lenient
"accuracy" many RAG evaluations report beside exact match), 0 when it does not;
undefined (NaN) for unanswerable questions and refusals. Registered with its direction
and range, so the report, the gate and MLflow treat it like a built-in metric.
"""

from __future__ import annotations

import math

from ablate.components.metrics.answer import normalize_answer
from ablate.components.metrics.registry import metric


@metric("contains_gold", stages=("answer",), direction="higher", low=0.0, high=1.0)
def contains_gold(view):
    """The answer contains a normalised reference answer."""
    q, a = view.question, view.answer
    if not q.answerable or a.refused:
        return {"answer/contains_gold": math.nan}
    text = normalize_answer(a.text)
    golds = [normalize_answer(g) for g in q.answers if normalize_answer(g)]
    return {"answer/contains_gold": float(any(g in text for g in golds))}
