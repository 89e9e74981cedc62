"""Robustness pairs: `query.perturbation` is swept like any variable; the perturbed text
reaches the stages that read the question (retrieval, reranking, generation), never the
gold spans; the answer-consistency rate against the baseline is a per-question metric with
paired tests. Stages run directly (no Prefect, no MLflow), BM25 + extractive."""

from __future__ import annotations

import math

import polars as pl

from ablate.components.metrics.consistency import COLUMN, with_consistency
from tests.specs import FAST_STATS, experiment, pipeline, vary

SPEC = experiment(
    "robustness", tier="smoke", smoke_size=20, split="all", seed=3,
    metrics={"ks": [1, 5], "key": ["final/recall_at_5", "answer/f1"]}, stats=FAST_STATS,
    baseline=pipeline(chunking={"size": 48, "overlap": 16}),
    sweeps=[vary("query.perturbation", "typo", "casing")])


def test_the_perturbed_query_reaches_retrieval_not_the_labels(sweep):
    from ablate.flows.run.stages import questions_of
    ctx, _, _ = sweep
    base, typo = ctx.plan.by_variant["baseline"], ctx.plan.by_variant["query.perturbation=typo"]
    assert typo["chunk"] == base["chunk"] and typo["label"] == base["label"]
    assert typo["retrieve:bm25"] != base["retrieve:bm25"] and typo["generate"] != base["generate"]
    node = ctx.plan.nodes[typo["retrieve:bm25"]]
    texts = {q.qid: q.question for q in questions_of(ctx, node)}
    original = {q.qid: q.question for q in ctx.questions}
    changed = [q for q in original if texts[q] != original[q]]
    assert len(changed) >= len(original) // 2  # most questions have a 4+ letter word
    assert all(sorted(texts[q]) == sorted(original[q]) for q in changed)  # a swap, no more
    score = ctx.plan.nodes[typo["score"]]
    assert [q.question for q in questions_of(ctx, score)] == [q.question for q in ctx.questions]


def test_answer_consistency_is_a_rate_not_a_paired_comparison(sweep):
    _, folder, _ = sweep
    pq = pl.read_parquet(folder / "per_query.parquet")
    assert pq.filter(pl.col("variant") == "baseline")[COLUMN].to_list() == [1.0] * 20
    rate = pq.filter(pl.col("variant") == "query.perturbation=typo")[COLUMN].mean()
    assert 0.0 <= rate < 1.0  # swapped letters change some extracted answers
    stats = pl.read_parquet(folder / "stats.parquet")
    assert COLUMN not in set(stats["metric"])  # no paired test against definitional 1s
    report = (folder / "report.md").read_text()
    assert "Answer consistency (" in report and f"| variant | value | {COLUMN} |" not in report


def test_consistency_by_hand():
    pq = pl.DataFrame({"variant": ["baseline", "baseline", "p", "p", "other", "other"],
                       "qid": ["a", "b", "a", "b", "a", "b"],
                       "answer": ["The Eiffel Tower", "因信稱義", "eiffel tower", "因信稱義。",
                                  "x", "y"]})
    out = with_consistency(pq, "baseline", {"p"})[COLUMN].to_list()
    assert out[:4] == [1.0, 1.0, 1.0, 1.0]  # SQuAD normalisation; CMRC drops 。
    assert all(math.isnan(v) for v in out[4:])  # not a perturbation: undefined
    changed = pq.with_columns(pl.Series("answer", ["Paris", "x", "London", "x", "", ""]))
    assert with_consistency(changed, "baseline", {"p"})[COLUMN].to_list()[2:4] == [0.0, 1.0]
    assert COLUMN not in with_consistency(pq.with_columns(pl.lit(1.0).alias(COLUMN)),
                                          "baseline", set()).columns
