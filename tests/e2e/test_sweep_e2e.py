"""End to end: a sweep on a tiny SQuAD slice through the real Prefect flow into a real
MLflow store, with real BM25, MiniLM embeddings and statistics."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from tests.specs import pipeline, vary, write_experiment

FIELDS = {"tier": "smoke", "smoke_size": 24, "seed": 3,
          "metrics": {"ks": [1, 3, 5], "key": ["final/recall_at_3", "answer/f1"]},
          "stats": {"resamples": 2000, "bootstrap_resamples": 1000},
          "baseline": pipeline(retrieval={"paths": ["bm25", "dense"], "depth": 10},
                               fusion={"rrf_k": 60}),
          "sweeps": [vary("fusion.rrf_k", 5, 500), vary("retrieval.paths", ["bm25"])]}


@pytest.fixture(scope="module")
def sweep(prefect_server, tmp_path_factory, shared_cache):
    from ablate.flows.sweep import run_sweep
    tmp = tmp_path_factory.mktemp("e2e")
    spec = write_experiment(tmp, "e2e-tiny", **FIELDS)
    uri = f"sqlite:///{tmp / 'mlflow.db'}"
    from ablate.flows.run.context import forget_contexts
    forget_contexts()
    result = run_sweep(str(spec), out=str(tmp / "runs"), cache_dir=str(shared_cache),
                       tracking_uri=uri, artifact_root=(tmp / "artifacts").as_uri(), mlflow=True)
    return result, uri


def test_outputs_written(sweep):
    result, _ = sweep
    out = Path(result["sweep_dir"])
    for name in ("manifest.json", "variants.json", "per_query.parquet", "stats.parquet",
                 "report.md", "report.html"):
        assert (out / name).is_file(), name
    per_query = pl.read_parquet(out / "per_query.parquet")
    assert per_query.height == 4 * 24  # baseline + 3 variants, 24 questions each
    assert set(per_query["variant"]) == {"baseline", "fusion.rrf_k=5", "fusion.rrf_k=500",
                                         "retrieval.paths=bm25"}
    # unanswerable questions have undefined retrieval metrics, never 0 or 1
    unans = per_query.filter(~pl.col("answerable"))
    assert unans.height > 0 and unans["final/recall_at_3"].is_nan().all()
    man = json.loads((out / "manifest.json").read_text())
    assert man["stages"]["planned"]["chunk"] == 1  # every variant shares one chunking
    assert man["stages"]["planned"]["retrieve"] == 2  # bm25 + dense, shared by all variants


def test_models_released_while_the_light_stages_run(sweep):
    """The encoder is unloaded (and MLflow opened) once the dense stage is done, before the
    fuse/rerank/generate/score stages that follow it have all finished."""
    result, _ = sweep
    times = result["timeline"]
    assert times["models_released"] < times["stages_done"], times


def test_mlflow_parent_and_children(sweep):
    from mlflow.tracking import MlflowClient
    result, uri = sweep
    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name("e2e-tiny")
    runs = client.search_runs([exp.experiment_id])
    parents = [r for r in runs if r.data.tags.get("ablate.role") == "parent"]
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId")]
    assert len(parents) == 1 and len(children) == 4
    assert {c.data.tags["mlflow.parentRunId"] for c in children} == {parents[0].info.run_id}
    by_name = {c.data.tags["variant"]: c for c in children}  # run names are the report's
    assert by_name["fusion.rrf_k=5"].info.run_name == "fusion.rrf_k=5"
    assert by_name["fusion.rrf_k=5"].data.params["fusion.rrf_k"] == "5"
    assert by_name["baseline"].data.params["fusion.rrf_k"] == "60"
    assert by_name["retrieval.paths=bm25"].data.params["retrieval.paths"] == "bm25"
    assert by_name["fusion.rrf_k=500"].data.tags["ablation.variable"] == "fusion.rrf_k"
    assert "final/recall_at_3" in by_name["baseline"].data.metrics


def test_report_rows_match_stats(sweep):
    from ablate.components.report.intervals import ci_cell
    from ablate.components.report.markdown import fmt, fmt_p
    result, _ = sweep
    out = Path(result["sweep_dir"])
    stats = pl.read_parquet(out / "stats.parquet")
    report = (out / "report.md").read_text()
    rows = stats.filter(pl.col("metric").is_in(["final/recall_at_3", "answer/f1"]))
    assert rows.height == 2 * 3
    lines = report.splitlines()
    for r in rows.iter_rows(named=True):
        expected = (f"{fmt(r['delta'])} | {ci_cell(r)} | "
                    f"{fmt_p(r['p_value'])} | {fmt_p(r['p_adjusted'])} |")
        assert any(line.startswith(f"| {r['variant']} |") and expected in line
                   for line in lines), (r["variant"], r["metric"], expected)


def test_rerun_reuses_every_stage_and_mlflow_runs(sweep, shared_cache):
    """An unchanged re-run computes nothing and, its outputs being in place and logged,
    skips the analysis, report and MLflow (and says so); with an output missing it
    analyses again and writes the same numbers, logging to the same MLflow runs."""
    from mlflow.tracking import MlflowClient

    from ablate.flows.run.context import forget_contexts
    from ablate.flows.sweep import run_sweep
    result, uri = sweep
    out = Path(result["sweep_dir"])
    first = (out / "per_query.parquet").read_bytes()
    first_stats = (out / "stats.parquet").read_bytes()
    first_manifest = (out / "manifest.json").read_bytes()
    assert json.loads((out / "mlflow.json").read_text())["tracking_uri"] == uri
    spec = json.loads((out / "manifest.json").read_text())["experiment_file"]
    forget_contexts()
    again = run_sweep(spec, out=str(out.parent), cache_dir=str(shared_cache), tracking_uri=uri,
                      artifact_root=None, mlflow=True)
    assert Path(again["sweep_dir"]) == out
    assert again["unchanged"] and again["mlflow_skipped"]
    assert again["mlflow"]["parent"] == result["mlflow"]["parent"]
    assert (out / "manifest.json").read_bytes() == first_manifest  # not rewritten

    (out / "report.md").unlink()  # outputs no longer in place: analyse again
    forget_contexts()
    third = run_sweep(spec, out=str(out.parent), cache_dir=str(shared_cache), tracking_uri=uri,
                      artifact_root=None, mlflow=True)
    assert not third["unchanged"] and not third.get("mlflow_skipped")
    man = json.loads((out / "manifest.json").read_text())
    assert all(c["computed"] == 0 for c in man["stages"]["run"].values()), man["stages"]["run"]
    assert (out / "report.md").is_file()
    assert (out / "per_query.parquet").read_bytes() == first
    assert (out / "stats.parquet").read_bytes() == first_stats
    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name("e2e-tiny")
    runs = client.search_runs([exp.experiment_id])
    assert len(runs) == 5  # the same parent and four children, no duplicates


def test_export_matches_an_independent_evaluator(sweep, tmp_path):
    """TREC export of the candidates stage, scored by ranx, equals ablate's own metrics."""
    from ranx import Qrels, Run, evaluate

    from ablate.flows.cli.export import export_sweep
    result, _ = sweep
    out = Path(result["sweep_dir"])
    paths = export_sweep(out, tmp_path, variants=["baseline"], stages=["candidates"])
    assert sorted(p.name for p in paths) == [
        "baseline.candidates.groups.run", "baseline.candidates.run", "baseline.groups.qrels",
        "baseline.qrels", "export.json", "id_map.tsv"]
    qrels = Qrels.from_file(str(tmp_path / "baseline.qrels"), kind="trec")
    run = Run.from_file(str(tmp_path / "baseline.candidates.run"), kind="trec")
    names = ["precision@3", "mrr@5", "ndcg@5", "hit_rate@1"]
    evaluate(qrels, run, names, make_comparable=True)
    per_query = pl.read_parquet(out / "per_query.parquet").filter(
        (pl.col("variant") == "baseline") & pl.col("answerable"))
    for name, col in zip(names, ("precision_at_3", "mrr_at_5", "ndcg_at_5", "hit_at_1")):
        for qid, ours in zip(per_query["qid"], per_query[f"candidates/{col}"]):
            assert ours == pytest.approx(run.scores[name].get(qid, 0.0), abs=1e-9), (qid, name)
    # every metric, K and stage: tests/flows/outputs/test_stage_outputs.py


def test_report_shows_the_tradeoff_front_and_the_tails(sweep):
    """Issue 53 on a real run: the trade-off section names the Pareto set of the primary key
    metric against P95 end-to-end latency (nothing is priced, so latency alone), the Tails
    table shows each variant's P10, and stats.parquet has the p10 columns."""
    result, _ = sweep
    out = Path(result["sweep_dir"])
    md = (out / "report.md").read_text()
    assert md.index("## Overview") < md.index("## Quality, latency and cost") < md.index("## Findings")
    front = next(line for line in md.splitlines()
                 if line.startswith("- Pareto-optimal on final/recall_at_3 and P95 end-to-end latency: "))
    names = front.split(": ", 1)[1].rstrip(".").split(", ")
    assert names and set(names) <= {"baseline", "fusion.rrf_k=5", "fusion.rrf_k=500",
                                    "retrieval.paths=bm25"}
    assert "No variant has a cost per question" in md
    assert "plots/tradeoff.svg" in md and (out / "plots" / "tradeoff.svg").is_file()
    assert "## Tails: the worst tenth of questions" in md
    stats = pl.read_parquet(out / "stats.parquet")
    assert stats["p10_variant"].is_not_null().any() and stats["p10_baseline"].is_not_null().any()
