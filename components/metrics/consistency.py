"""Answer consistency of robustness pairs: does a variant that reads a perturbed query
(`query.perturbation`) give the same answer as the baseline, which reads the question as
written, on the same question? Same = exact match after the answer normalisation of the
experiment (SQuAD, or CMRC for Chinese answers: `metrics.answer_normalizer`).

A relative metric: it needs the baseline's answers, so scoring leaves it undefined and it
is filled in after every variant is scored, as the column `robustness/answer_consistency`
(1 for the baseline,
where it answered; NaN for variants that are not perturbations). Its mean over a
variant's questions is the consistency rate; its paired test against the baseline's 1s
asks whether the perturbation changes answers at all.
"""

from __future__ import annotations

import math
from typing import Collection

import polars as pl

from ablate.components.metrics.answer import exact_match
from ablate.components.metrics.registry import QuestionView, metric

COLUMN = "robustness/answer_consistency"


@metric("answer_consistency", stages=("robustness",), direction="higher",
        needs={"robustness": ("generate",)})
def _declared(view: QuestionView) -> dict[str, float]:
    """Same answer as the unperturbed baseline on this question (normalised exact match;
    filled in after scoring for `query.perturbation` variants): undefined per variant."""
    return {COLUMN: math.nan}


def with_consistency(per_query: pl.DataFrame, baseline: str, perturbed: Collection[str],
                     normalizer: str = "auto") -> pl.DataFrame:
    """`per_query` with COLUMN filled in when some variant is `perturbed` (and answers
    exist); without one, COLUMN (all NaN from scoring) is dropped."""
    if not perturbed or "answer" not in per_query.columns:
        return per_query.drop(COLUMN, strict=False)
    base = {q: a for q, a in per_query.filter(pl.col("variant") == baseline)
            .select("qid", "answer").iter_rows()}
    values = []
    for variant, qid, answer in per_query.select("variant", "qid", "answer").iter_rows():
        ref = base.get(qid)
        if ref is None or answer is None or (variant != baseline and variant not in perturbed):
            values.append(math.nan)
        elif variant == baseline:
            values.append(1.0)
        else:
            values.append(exact_match(answer, [ref], normalizer))
    return per_query.with_columns(pl.Series(COLUMN, values, dtype=pl.Float64))
