"""Score one variant: per-question retrieval metrics at three stages, answer metrics, bucket.

Deterministic columns go to per_query.parquet; latency columns (prefix `latency/`) vary
run to run and are split off into timings.parquet by the caller.

A failed generation (Answer.error) gets NaN answer metrics and NaN refusal indicators
(undefined: excluded and counted by the statistics), `answer/generation_error` = 1 and
the bucket generation_error. A generator that reads no context (`context_used=False`,
closed book) is scored without the assembled context: lexical support NaN, bucket by
correctness only; its retrieval columns still describe the shared retrieval.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import polars as pl

from components.metrics.answer import answer_metrics
from components.metrics.attribution import failure_bucket
from components.metrics.retrieval import retrieval_metrics, span_coverage
from components.records import Answer, PackedContext, Question

STAGE_PREFIXES = ("candidates", "reranked", "final")
ANSWER_KEYS = ("em", "f1", "correct", "refused", "lexical_support", "generation_error")


def groups_by_qid(labels: pl.DataFrame, questions: Sequence[Question]) -> dict[str, list[dict[str, float]]]:
    out = {q.qid: [dict() for _ in q.evidence] for q in questions}
    for qid, group, chunk_id, gain in labels.select("qid", "group", "chunk_id", "gain").iter_rows():
        if qid in out and group < len(out[qid]):
            out[qid][group][chunk_id] = gain
    return out


def refusal_indicators(answerable: bool, refused: bool, correct: bool,
                       error: bool = False) -> dict[str, float]:
    """Per-question indicators whose means are the refusal rates of the whole set, each
    defined (not NaN) only on its own denominator: coverage over all questions, false
    acceptance over unanswerable ones, false refusal over answerable ones, risk over
    answered ones. As columns they get paired tests like every other metric. A failed
    generation (`error`) neither answered nor refused: every indicator is NaN."""
    nan = math.nan
    if error:
        return {k: nan for k in ("refusal/answer_coverage", "refusal/false_acceptance",
                                 "refusal/false_refusal", "refusal/answer_risk")}
    return {
        "refusal/answer_coverage": float(not refused),
        "refusal/false_acceptance": float(not refused) if not answerable else nan,
        "refusal/false_refusal": float(refused) if answerable else nan,
        "refusal/answer_risk": float(not correct) if not refused else nan,
    }


def _relevant(ids: Sequence[str], groups: list[dict[str, float]], threshold: float) -> bool:
    return any(c in g and g[c] >= threshold for c in ids for g in groups)


def score_variant(*, questions: Sequence[Question], labels: pl.DataFrame,
                  candidates: Mapping[str, list], reranked: Mapping[str, list],
                  contexts: Mapping[str, PackedContext], answers: Mapping[str, Answer],
                  depth: int, metrics: Mapping[str, Any], pricing: Mapping[str, float] | None = None,
                  latency: Mapping[str, Mapping[str, float]] | None = None,
                  context_used: bool = True) -> pl.DataFrame:
    ks, gain, thr = metrics["ks"], metrics["gain"], metrics["label_threshold"]
    groups = groups_by_qid(labels, questions)
    rows = []
    for q in questions:
        g = groups[q.qid]
        cand = [c for c, _ in candidates.get(q.qid, [])]
        rer = [c for c, _ in reranked.get(q.qid, [])]
        ctx = contexts.get(q.qid)
        final = list(ctx.chunk_ids) if ctx else []
        row: dict[str, Any] = {"qid": q.qid, "answerable": q.answerable, "cluster": q.cluster,
                               "type": q.type}
        for prefix, ids in zip(STAGE_PREFIXES, (cand, rer, final)):
            for name, value in retrieval_metrics(ids, g, ks, thr, gain).items():
                row[f"{prefix}/{name}"] = value
        row["final/span_coverage"] = span_coverage(ctx.passages if ctx else (), q)
        row["final/context_tokens"] = float(ctx.n_tokens) if ctx else 0.0
        ans = answers[q.qid]
        failed = ans.error is not None
        am = answer_metrics(q, ans, ctx if context_used else None,
                            f1_threshold=metrics.get("correct_f1", 0.5),
                            cost_per_1k_in=(pricing or {}).get("in", 0.0),
                            cost_per_1k_out=(pricing or {}).get("out", 0.0))
        for key in ANSWER_KEYS:
            row[f"answer/{key}"] = am[key]
        row.update(refusal_indicators(q.answerable, am["refused"] == 1.0, am["correct"] == 1.0,
                                      error=failed))
        row["tokens/in"] = am["tokens_in"]
        row["tokens/out"] = am["tokens_out"]
        row["cost/usd"] = am["cost"]
        row["bucket"] = failure_bucket(
            answerable=q.answerable,
            in_candidates=_relevant(cand, g, thr),
            in_reranked_top=_relevant(rer[:depth], g, thr),
            in_prompt=_relevant(final, g, thr),
            correct=am["correct"] == 1.0, refused=am["refused"] == 1.0,
            has_evidence=bool(q.evidence), context_used=context_used, error=failed)
        row["answer"] = ans.text
        for stage, values in (latency or {}).items():
            row[f"latency/{stage}"] = values.get(q.qid, math.nan)
        rows.append(row)
    frame = pl.DataFrame(rows, infer_schema_length=None)
    floats = [c for c in frame.columns if "/" in c]
    return frame.with_columns([pl.col(c).cast(pl.Float64) for c in floats]).with_columns(
        [pl.col(c).fill_null(math.nan) for c in floats])
