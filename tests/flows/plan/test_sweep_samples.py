"""Per-sweep sample sizes: a sweep may set its own `tier` or `n`; samples are nested, the
baseline runs on their union and each comparison pairs exactly its own questions; the
manifest, the report, MLflow's child figures and `ablate check` state n. Stages run
directly (no Prefect, no MLflow), BM25 + extractive: a few seconds."""

from __future__ import annotations

import json

import polars as pl
import pytest

from ablate.components.contract.errors import InputError
from tests.flows.direct import write_spec
from tests.specs import TINY_SQUAD

# Inline, not tests.specs: a spec-error test below names a line of this exact layout.
SPEC = f"""
name: samples
dataset: {{path: {TINY_SQUAD}, format: squad}}
tier: smoke
smoke_size: 10
split: all
seed: 3
metrics: {{ks: [1, 5], key: [final/recall_at_5, answer/f1]}}
stats: {{resamples: 200, bootstrap_resamples: 200}}
baseline:
  chunking: {{size: 48, overlap: 16}}
  retrieval: {{paths: [bm25], depth: 10}}
  rerank: {{depth: 5}}
  context: {{budget: 96}}
  generator: {{name: extractive}}
sweeps:
  - variable: chunking.size   # cheap retrieval sweep: its own, larger sample
    values: [96]
    n: 30
  - variable: fusion.rrf_k    # the experiment's smoke tier (10)
    values: [10]
"""


def _qids(ctx, name):
    return {q.qid for q in ctx.questions_of(name)}


def test_samples_are_nested_and_the_baseline_runs_on_their_union(sweep):
    ctx, _, _ = sweep
    small, large = _qids(ctx, "fusion.rrf_k=10"), _qids(ctx, "chunking.size=96")
    assert len(small) == 10 and len(large) == 30 and small < large
    assert _qids(ctx, "baseline") == small | large == {q.qid for q in ctx.questions}
    # the 10 are the experiment's smoke tier: the same questions as without the sweep's n
    from ablate.components.data.selection import sample
    pool = [q for q in ctx.questions]
    assert small == {q.qid for q in sample(ctx.dataset.questions, tier="smoke", n=None, seed=3,
                                           smoke_size=10, regression_size=500)}
    del pool


def test_each_stage_runs_on_its_variants_questions(sweep):
    ctx, _, _ = sweep
    base = ctx.plan.by_variant["baseline"]
    rrf = ctx.plan.by_variant["fusion.rrf_k=10"]
    assert rrf["retrieve:bm25"] != base["retrieve:bm25"]  # 10 questions, not 30
    assert rrf["chunk"] == base["chunk"]  # the chunks do not depend on the questions
    frame = ctx.store.read("retrieve", rrf["retrieve:bm25"])
    assert set(frame["qid"].unique()) == _qids(ctx, "fusion.rrf_k=10")


def test_comparisons_pair_exactly_their_own_questions(sweep):
    ctx, folder, _ = sweep
    pq = pl.read_parquet(folder / "per_query.parquet")
    counts = dict(pq.group_by("variant").len().iter_rows())
    assert counts == {"baseline": 30, "chunking.size=96": 30, "fusion.rrf_k=10": 10}
    stats = pl.read_parquet(folder / "stats.parquet").filter(pl.col("metric") == "answer/f1")
    n = {r["variant"]: r["n_used"] for r in stats.iter_rows(named=True)}
    assert n == {"chunking.size=96": 30, "fusion.rrf_k=10": 10}
    man = json.loads((folder / "manifest.json").read_text())
    assert man["questions"]["total"] == 30
    assert man["questions"]["per_variant"] == {"chunking.size=96": 30, "fusion.rrf_k=10": 10}
    report = (folder / "report.md").read_text()
    assert "own nested samples: chunking.size=96 30, fusion.rrf_k=10 10" in report
    # the baseline's other questions are missing from a smaller sample by design
    assert stats.filter(pl.col("variant") == "fusion.rrf_k=10")["missingness_flag"].to_list() == [True]
    assert "Unequal missingness" not in report


def test_manifest_times_each_stage_per_question_it_ran_on(sweep):
    """The rates `ablate check` and the sweep ETA line estimate from (issue 42, item 6):
    a stage of the rrf_k sweep counts its 10 questions, not the run's 30."""
    ctx, folder, _ = sweep
    by = json.loads((folder / "manifest.json").read_text())["stages"]["by_component"]
    gen = [n for n in ctx.plan.nodes.values() if n.stage == "generate"]
    assert by["generate:extractive"]["computed"] == len(gen) == 3
    assert by["generate:extractive"]["units"] == 30 + 30 + 10


def test_mlflow_child_figures_state_n(sweep):
    from ablate.components.report.sweep_data import load_sweep
    from ablate.flows.track.run_data import variant_metrics
    _, folder, _ = sweep
    res = load_sweep(folder)
    m = variant_metrics(res.per_query, res.stats, res.timings, "fusion.rrf_k=10",
                        ["answer/f1"])
    assert m["questions"] == 10 and m["n/answer/f1"] == 10


def test_check_states_the_questions_per_comparison(sweep, tmp_path):
    from ablate.flows.cli.check import plan_lines
    ctx, _, _ = sweep
    lines = plan_lines(ctx, tmp_path)
    assert lines[1].startswith("questions: 30 for the baseline (the union")
    assert any(x.startswith("  chunking.size: 30 per comparison (n 30, nested in the baseline's), "
                            "in 3 clusters (by document") for x in lines), lines


def test_a_command_line_tier_puts_every_variant_on_it(sweep):
    from ablate.flows.run.context import RunOptions, build_context
    _, _, spec = sweep
    ctx = build_context(str(spec), RunOptions(tier="smoke", cache_dir=str(spec.parent / "c2")))
    assert {len(ctx.questions_of(v.name)) for v in ctx.variants} == {10}


def test_tier_and_n_together_is_a_spec_error(tmp_path):
    from ablate.flows.plan.spec_load import load_spec
    spec = write_spec(tmp_path, SPEC.replace("    n: 30", "    n: 30\n    tier: smoke"))
    with pytest.raises(InputError) as err:
        load_spec(spec)
    assert "set `tier` or `n`, not both" in str(err.value)
    assert "exp.yaml:17: field 'sweeps.0'" in str(err.value)
