"""Retrieval-only studies (`generator: {name: none}`): the plan has no assemble or generate
stage, the score stage only retrieval metrics at the candidates and reranked stages, and
the outputs (report, per-query table, export) say so. Stages run directly (no Prefect,
no MLflow), BM25 only: a few seconds."""

from __future__ import annotations

import json

import polars as pl
import pytest

from tests.flows.direct import run_direct
from tests.specs import FAST_STATS, experiment, pipeline, vary

SPEC = experiment(
    "retrieval-only", tier="full", split="all", seed=3,
    metrics={"ks": [1, 5], "key": ["final/recall_at_5", "reranked/ndcg_at_5"]}, stats=FAST_STATS,
    baseline=pipeline(chunking={"size": 48, "overlap": 16},
                      rerank={"method": "composite", "depth": 6, "weights": {"source": 1.0}},
                      context=None, generator={"name": "none"}),
    sweeps=[vary("chunking.size", 96),
            # other keys, the same order of chunks: no effect
            vary("rerank.weights", {"source": 2.0}),
            # read by no stage of this pipeline: the same stages
            vary("context.budget", 60)])


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    ctx, folder, _ = run_direct(tmp_path_factory.mktemp("retrieval-only"), SPEC)
    return ctx, folder


def test_plan_has_no_generation_stages(sweep):
    ctx, _ = sweep
    assert set(ctx.plan.count()) == {"chunk", "label", "retrieve", "fuse", "rerank", "score"}
    base = ctx.plan.by_variant["baseline"]
    assert ctx.plan.by_variant["context.budget=60"] == base
    assert ctx.plan.nodes[base["score"]].deps == tuple(
        base[s] for s in ("label", "retrieve:bm25", "fuse", "rerank"))


def test_only_retrieval_metrics_are_scored(sweep):
    _, out = sweep
    per_query = pl.read_parquet(out / "per_query.parquet")
    families = {c.split("/")[0] for c in per_query.columns if "/" in c}
    assert families == {"candidates", "reranked"}, families
    assert "answer" not in per_query.columns
    assert set(per_query["bucket"]) <= {"retrieved", "ranking_loss", "retrieval_miss",
                                        "no_evidence", "unanswerable"}
    unanswerable = per_query.filter(~pl.col("answerable"))
    assert unanswerable.height and set(unanswerable["bucket"]) == {"unanswerable"}
    assert unanswerable["reranked/recall_at_5"].is_nan().all()  # undefined, never 0
    stats = pl.read_parquet(out / "stats.parquet")
    assert {m.split("/")[0] for m in stats["metric"]} == {"candidates", "reranked"}


def test_report_uses_the_retrieval_key_metrics(sweep):
    _, out = sweep
    report = (out / "report.md").read_text()
    # final/recall_at_5 stands in at the reranked stage; no answer or final metric shown
    assert "| reranked/recall_at_5 |" in report and "| reranked/ndcg_at_5 |" in report
    assert "answer/" not in report and "final/" not in report
    assert "retrieved" in report  # the bucket table


def test_no_effect_compares_reranked_rankings(sweep):
    ctx, out = sweep
    from ablate.flows.outputs.write import no_effect_variants
    assert no_effect_variants(ctx) == ["rerank.weights=source:2", "context.budget=60"]
    assert json.loads((out / "manifest.json").read_text())["no_effect"] == \
        ["rerank.weights=source:2", "context.budget=60"]


def test_export_skips_the_missing_final_stage(sweep, tmp_path):
    from ablate.components.errors import InputError
    from ablate.flows.cli.export import export_sweep
    _, out = sweep
    written = export_sweep(out, tmp_path / "trec")
    names = {p.name for p in written}
    assert "baseline.reranked.run" in names and not any(".final." in n for n in names)
    with pytest.raises(InputError, match="no final ranking"):
        export_sweep(out, tmp_path / "trec2", stages=["final"])
