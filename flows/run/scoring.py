"""Score one variant: per-question retrieval metrics at three stages, answer metrics, bucket.

Deterministic columns go to per_query.parquet; timing columns (`latency/`, `index/`: the
metric registry's is_timing) vary run to run and are split off into timings.parquet by the
caller.

A failed generation (Answer.error) gets NaN answer metrics and NaN refusal indicators
(undefined: excluded and counted by the statistics), `answer/generation_error` = 1 and
the bucket generation_error (a wrong answer's bucket is answer_wrong). A generator that reads no context (`context_used=False`,
closed book) is scored without the assembled context: lexical support NaN, bucket by
correctness only; its retrieval columns still describe the shared retrieval.

A pipeline without a generate stage (retrieval only: its context is still assembled
under the token budget) passes `answers` as None and names the metrics its score stage
runs (`metric_names`): those that need a missing stage are not computed, and there is
no `answer` column.
"""

from __future__ import annotations

import math
import statistics
from typing import Any, Mapping, Sequence

import polars as pl

from ablate.components.contract.records import Answer, PackedContext, Question
from ablate.components.data.clusters import question_cluster
from ablate.components.metrics.attribution import failure_bucket
from ablate.components.metrics.registry import PathView, QuestionView, is_timing, score_question
from ablate.components.metrics.retrieval import groups_present


def groups_by_qid(labels: pl.DataFrame, questions: Sequence[Question]) -> dict[str, list[dict[str, float]]]:
    out: dict[str, list[dict[str, float]]] = {q.qid: [{} for _ in q.evidence] for q in questions}
    for qid, group, chunk_id, gain in labels.select("qid", "group", "chunk_id", "gain").iter_rows():
        if qid in out and group < len(out[qid]):
            out[qid][group][chunk_id] = gain
    return out


def _mean_over_repeats(rows: list[dict[str, float]]) -> dict[str, float]:
    """Per column: the mean over repeats where defined, and `sd::` the spread (ddof 1); a
    repeat without the column (a judged metric it has no judgment for) is undefined there."""
    out: dict[str, float] = {}
    for col in dict.fromkeys(c for r in rows for c in r):
        vals = [v for r in rows if not math.isnan(v := r.get(col, math.nan))]
        out[col] = statistics.fmean(vals) if vals else math.nan
        if not is_timing(col):
            out[f"sd::{col}"] = statistics.stdev(vals) if len(vals) > 1 else math.nan
    return out


def _per_repeat(judgments: Mapping[str, Any] | None, qid: str, n: int) -> list[Any]:
    """A question's judgments for each of its `n` repeats (None each without a judge; a
    repeat the judge has none for gets none: its judged metrics are NaN)."""
    if judgments is None:
        return [None] * n
    given = judgments.get(qid, {})
    if isinstance(given, Mapping):  # one for every repeat
        return [given] * n
    return [given[r] if r < len(given) else {} for r in range(n)]


def _relevant(ids: Sequence[str], groups: list[dict[str, float]], threshold: float) -> bool:
    return any(c in g and g[c] >= threshold for c in ids for g in groups)


def _every_group(ids: Sequence[str], groups: list[dict[str, float]], threshold: float) -> bool:
    """Whether every evidence group has a relevant chunk among `ids` (true without groups)."""
    return groups_present(ids, groups, threshold) == len(groups)


def score_variant(*, questions: Sequence[Question], labels: pl.DataFrame,
                  candidates: Mapping[str, list], reranked: Mapping[str, list],
                  contexts: Mapping[str, PackedContext] | None,
                  answers: Mapping[str, Answer | Sequence[Answer]] | None,
                  depth: int, metrics: Mapping[str, Any], pricing: Mapping[str, float] | None = None,
                  latency: Mapping[str, Mapping[str, float]] | None = None,
                  context_used: bool = True,
                  judgments: Mapping[str, Mapping[str, Any] | Sequence[Mapping[str, Any]]] | None = None,
                  metric_names: Sequence[str] | None = None,
                  paths: Mapping[str, Mapping[str, PathView]] | None = None,
                  usage: Mapping[str, Mapping[str, float] | Sequence[Mapping[str, float]]] | None = None,
                  ) -> pl.DataFrame:
    """One row per question: ids, the metrics' columns (`metric_names`, default every
    registered one) that the given inputs can feed, bucket, answer. `context_used`:
    whether the generator read the context (closed book does not), so its answer is never
    scored against a context it did not see. A question with several answers
    (generator.repeats) scores the mean over repeats (NaN repeats excluded), adds
    `sd::<metric>` columns (the between-repeat standard deviation) and keeps the first
    repeat's answer text and failure bucket. `judgments`: the judge stage's judgments per
    question, a list with one per repeat (each repeat scored with its own, so judged
    metrics are means over repeats too) or one for every repeat (None without a judge:
    judged metrics are left out). `paths`: each retrieval path's own output per question
    (its retrieve stage's, for the index metrics). `usage`: what the run recorded of each
    question's online work (components/metrics/cost.py), one for every repeat or a list
    with one per repeat."""
    thr = metrics["label_threshold"]
    available = tuple(s for s, given in (("assemble", contexts), ("generate", answers),
                                         ("judge", judgments)) if given is not None)
    params = {**metrics, "pricing": pricing or {}}
    groups = groups_by_qid(labels, questions)
    rows = []
    for q in questions:
        g = groups[q.qid]
        cand = [c for c, _ in candidates.get(q.qid, [])]
        rer = [c for c, _ in reranked.get(q.qid, [])]
        ctx = contexts.get(q.qid) if contexts is not None else None
        final = list(ctx.chunk_ids) if ctx else []
        given = answers[q.qid] if answers is not None else None
        repeats = [given] if given is None or isinstance(given, Answer) else list(given)
        lat = {stage: values.get(q.qid, math.nan) for stage, values in (latency or {}).items()}
        judged = _per_repeat(judgments, q.qid, len(repeats))
        used = _per_repeat(usage, q.qid, len(repeats)) if usage is not None else [{}] * len(repeats)
        scored = [score_question(QuestionView(
            q, g, {"candidates": cand, "reranked": rer, "final": final}, ctx,
            ctx if context_used else None, a, params, lat, judgments=j,
            paths={p: got[q.qid] for p, got in (paths or {}).items() if q.qid in got}, usage=u),
            metric_names, available) for a, j, u in zip(repeats, judged, used)]
        answer = repeats[0]
        row: dict[str, Any] = {"qid": q.qid, "answerable": q.answerable, "cluster": question_cluster(q),
                               "type": q.type}
        row.update(scored[0] if len(scored) == 1 else _mean_over_repeats(scored))
        in_top = _relevant(rer[:depth], g, thr)
        row["bucket"] = failure_bucket(
            answerable=q.answerable,
            in_candidates=_relevant(cand, g, thr),
            in_reranked_top=in_top,
            in_prompt=_relevant(final, g, thr) if contexts is not None else in_top,
            all_in_prompt=_every_group(final if contexts is not None else rer[:depth], g, thr),
            correct=scored[0].get("answer/correct") == 1.0,
            refused=scored[0].get("answer/refused") == 1.0,
            has_evidence=bool(q.evidence), context_used=context_used,
            error=answer is not None and answer.error is not None, answered=answer is not None)
        if answer is not None:
            row["answer"] = answer.text
            row["confidence"] = math.nan if answer.score is None else float(answer.score)
        rows.append(row)
    frame = pl.DataFrame(rows, infer_schema_length=None)
    floats = [c for c in frame.columns if "/" in c]
    return frame.with_columns([pl.col(c).cast(pl.Float64) for c in floats]).with_columns(
        [pl.col(c).fill_null(math.nan) for c in floats])
