"""Answer consistency of robustness pairs: does a variant that reads a perturbed query
(`query.perturbation`) give the same answer as the baseline, which reads the question as
written, on the same question? Same = exact match after the answer normalisation of the
experiment (SQuAD, or CMRC for Chinese answers: `metrics.answer_normalizer`).

A relative metric: it needs the baseline's answers, so scoring leaves it undefined and it
is filled in after every variant is scored, as the column `robustness/answer_consistency`
(1 for the baseline, where it answered; NaN for variants that are not perturbations).

**No paired test against the baseline.** The baseline's 1 is fixed by definition, so a
paired test of a variant against it has no valid null: its p-value only counts the
changed answers, and any change at all "rejects". The metric is declared `relative`, and
the statistics leave it out (ablate.components.metrics.registry.compared).

**What is reported instead, and against what** (the statistics:
ablate.components.stats.consistency). Per perturbed variant, the consistency
rate (its mean over the questions both answered), the answers it changed, and a 95%
interval for the rate that treats questions of one cluster (the per_query `cluster`
column: SQuAD article, else the question itself) as one unit (consistency_rates). The
reference the rate is read against is the baseline's **run-to-run agreement**: how often
re-running the unperturbed baseline gives the same answer, i.e. the rate under the null
"the perturbation changes answers no more often than re-running does". For a
deterministic generator (`extractive`, or a model at temperature 0: greedy decoding) it is
1 exactly, so every changed answer is the perturbation's: the changes are counted, not
sampled, and a test against 1 would say nothing the count does not; the interval says
how far the rate generalises beyond these questions. For a stochastic generator
(temperature > 0) the reference is below 1 and not measured here, so a rate below 1 mixes
the perturbation with sampling noise, and the report says so (reference_of).
"""

from __future__ import annotations

import math
from typing import Collection

import polars as pl

from ablate.components.metrics.answer import exact_match
from ablate.components.metrics.registry import QuestionView, metric

COLUMN = "robustness/answer_consistency"


@metric("answer_consistency", stages=("robustness",), direction="higher",
        needs={"robustness": ("generate",)}, relative=True)
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
