"""Retrieval-only studies (`generator: {name: none}`): the plan has no generate stage but
keeps the context stage, so every chunking is compared under the same token budget
(`final/*`); the score stage computes retrieval metrics at the candidates, reranked and
final stages, and the outputs (report, per-query table, export) say so. Stages run
directly (no Prefect, no MLflow), BM25 only: a few seconds."""

from __future__ import annotations

import json

import polars as pl

from tests.specs import FAST_STATS, experiment, pipeline, vary

BUDGET = 40
SPEC = experiment(
    "retrieval-only", tier="full", split="all", seed=3,
    metrics={"ks": [1, 5], "key": ["final/recall_at_5", "reranked/ndcg_at_5"]}, stats=FAST_STATS,
    baseline=pipeline(chunking={"size": 16, "overlap": 4},
                      rerank={"method": "composite", "depth": 6, "weights": {"source": 1.0}},
                      context={"budget": BUDGET}, generator={"name": "none"}),
    sweeps=[vary("chunking.size", 32),
            # other keys, the same order of chunks: no effect
            vary("rerank.weights", {"source": 2.0}),
            # read by the context stage only: same rankings, other contexts
            vary("context.budget", 20)])


def test_plan_keeps_the_context_stage_without_generation(sweep):
    ctx, _, _ = sweep
    assert set(ctx.plan.count()) == {"chunk", "label", "retrieve", "fuse", "rerank",
                                     "assemble", "score"}
    base = ctx.plan.by_variant["baseline"]
    budget = ctx.plan.by_variant["context.budget=20"]
    assert budget["rerank"] == base["rerank"] and budget["assemble"] != base["assemble"]
    assert ctx.plan.nodes[base["score"]].deps == tuple(
        base[s] for s in ("label", "retrieve:bm25", "fuse", "rerank", "assemble"))


def test_retrieval_metrics_at_three_stages_under_one_budget(sweep):
    _, out, _ = sweep
    per_query = pl.read_parquet(out / "per_query.parquet")
    families = {c.split("/")[0] for c in per_query.columns if "/" in c}
    # retrieval costs money too: cost/embed, search, rerank and total (0 without prices)
    assert families == {"candidates", "reranked", "final", "cost"}, families
    assert "answer" not in per_query.columns
    assert set(per_query["bucket"]) <= {"retrieved", "ranking_loss", "retrieval_miss",
                                        "budget_cut", "no_evidence", "unanswerable"}
    unanswerable = per_query.filter(~pl.col("answerable"))
    assert unanswerable.height and set(unanswerable["bucket"]) == {"unanswerable"}
    assert unanswerable["final/recall_at_5"].is_nan().all()  # undefined, never 0
    # both chunk sizes fill the same budget: the comparable view of a chunk-size sweep
    for name, budget in (("baseline", BUDGET), ("chunking.size=32", BUDGET),
                         ("context.budget=20", 20)):
        tokens = per_query.filter(pl.col("variant") == name)["final/context_tokens"]
        assert tokens.max() <= budget and tokens.mean() > budget / 2, (name, tokens.max())
    # a budget smaller than the reranked top cuts evidence it had
    assert "budget_cut" in set(per_query.filter(pl.col("variant") == "context.budget=20")["bucket"])
    stats = pl.read_parquet(out / "stats.parquet")
    assert {m.split("/")[0] for m in stats["metric"]} == {"candidates", "reranked", "final", "cost"}


def test_report_uses_the_retrieval_key_metrics(sweep):
    _, out, _ = sweep
    report = (out / "report.md").read_text()
    assert "| final/recall_at_5 |" in report and "| reranked/ndcg_at_5 |" in report
    assert "answer/" not in report
    assert "retrieved" in report  # the bucket table


def test_no_effect_compares_final_contexts(sweep):
    ctx, out, _ = sweep
    from ablate.flows.outputs.write import no_effect_variants
    assert no_effect_variants(ctx) == ["rerank.weights=source:2"]
    assert json.loads((out / "manifest.json").read_text())["no_effect"] == \
        ["rerank.weights=source:2"]


def test_export_writes_the_final_ranking(sweep, tmp_path):
    from ablate.flows.cli.export import export_sweep
    _, out, _ = sweep
    names = {p.name for p in export_sweep(out, tmp_path / "trec")}
    assert {"baseline.reranked.run", "baseline.final.run"} <= names


def test_the_sweep_self_tests_its_statistics_on_its_own_data(sweep):
    """The manifest's self_test comes from this sweep's key comparisons (no model compute)
    and the report header quotes it."""
    _, out, _ = sweep
    st = json.loads((out / "manifest.json").read_text())["self_test"]
    assert "error" not in st, st
    stats = pl.read_parquet(out / "stats.parquet")
    key = stats.filter(pl.col("metric").is_in(["final/recall_at_5", "reranked/ndcg_at_5"]))
    assert set(st["comparisons"]) <= {f"{v} on {m}" for v, m in key.select("variant", "metric").rows()}
    if st["comparisons"]:
        assert {f["family"] for f in st["families"]} == {"permutation", "t"}
    header = (out / "report.md").read_text().split("## Overview")[0]
    assert "**Self-test**" in header
