"""Sequential stopping through the real stages (run directly, no Prefect, no MLflow): looks
extend nested prefixes, a variant with a large effect stops at an early look, one without
runs to its full sample, and the outputs record the looks and decide by them."""

from __future__ import annotations

import json

import polars as pl
import pytest

from tests.flows.direct import write_spec
from tests.specs import TINY_SQUAD

# Inline, not tests.specs: a spec-error test below names a line of this exact layout.
SPEC = f"""
name: sequential
dataset: {{path: {TINY_SQUAD}, format: squad}}
tier: full
split: all
seed: 3
metrics: {{ks: [1, 5], key: [final/recall_at_5]}}
stats: {{resamples: 200, bootstrap_resamples: 200, sequential: true, batch: 10}}
baseline:
  chunking: {{size: 48, overlap: 16}}
  retrieval: {{paths: [bm25], depth: 10}}
  rerank: {{depth: 5}}
  context: {{budget: 200}}
  generator: {{name: extractive}}
sweeps:
  - variable: context.budget      # 4 tokens: no chunk fits, final recall collapses
    values: [4]
  - variable: fusion.rrf_k        # one path: nothing changes
    values: [10]
"""


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    from ablate.flows.outputs.write import collect_per_query, write_outputs
    from ablate.flows.run.context import RunOptions, build_context
    from ablate.flows.run.sequential import run_sequential
    from ablate.flows.run.stages import run_stage
    tmp = tmp_path_factory.mktemp("sequential")
    spec = write_spec(tmp, SPEC)
    cache = str(tmp / "cache")
    ctx = build_context(str(spec), RunOptions(cache_dir=cache))
    full = {v.name: len(ctx.questions_of(v.name)) for v in ctx.variants if not v.is_baseline}
    seen = []

    def run_look(sizes):
        c = build_context(str(spec), RunOptions(cache_dir=cache, sizes=tuple(sorted(sizes.items()))))
        for node in c.plan.nodes.values():
            run_stage(c, node)
        seen.append((dict(sizes), c))
        return collect_per_query(c)[0]

    record = run_sequential(full, 10, 0.05, ["final/recall_at_5"], run_look)
    last = seen[-1][1]
    return record, seen, write_outputs(last, tmp / "runs", last.started, {}, record), full


def test_a_large_effect_stops_early_and_a_null_runs_to_the_end(sweep):
    record, seen, _, full = sweep
    assert full == {"context.budget=4": 55, "fusion.rrf_k=10": 55}
    assert record["sizes"]["fusion.rrf_k=10"] == 55  # never decided: all looks
    assert record["sizes"]["context.budget=4"] < 55  # decided at an early look
    assert record["decided"] == {"context.budget=4|final/recall_at_5": True,
                                 "fusion.rrf_k=10|final/recall_at_5": False}
    looks = record["looks"]["fusion.rrf_k=10"]["final/recall_at_5"]
    assert [x["n"] for x in looks] == [10, 20, 30, 40, 50, 55]
    bounds = [x["boundary"] for x in looks]
    assert bounds == sorted(bounds, reverse=True)  # O'Brien-Fleming: strict early, ~z at the end


def test_looks_are_nested_prefixes(sweep):
    _, seen, _, _ = sweep
    prev = None
    for _, ctx in seen:
        qids = {q.qid for q in ctx.questions_of("fusion.rrf_k=10")}
        assert prev is None or prev < qids
        prev = qids


def test_outputs_decide_by_the_looks(sweep):
    record, _, folder, _ = sweep
    man = json.loads((folder / "manifest.json").read_text())
    assert man["sequential"]["sizes"] == record["sizes"]
    stats = pl.read_parquet(folder / "stats.parquet").filter(pl.col("metric") == "final/recall_at_5")
    sig = dict(zip(stats["variant"], stats["significant"]))
    assert sig == {"context.budget=4": True, "fusion.rrf_k=10": False}
    pq = pl.read_parquet(folder / "per_query.parquet")
    assert pq.filter(pl.col("variant") == "context.budget=4").height == record["sizes"]["context.budget=4"]
    assert "Sequential stopping" in (folder / "report.md").read_text()


def test_the_prefect_flow_runs_the_looks(prefect_server, tmp_path, shared_cache):
    """The same sweep through the real flow: each look's sizes reach the stage tasks."""
    from ablate.flows.run.context import forget_contexts
    from ablate.flows.sweep import run_sweep
    spec = write_spec(tmp_path, SPEC)
    forget_contexts()
    result = run_sweep(str(spec), out=str(tmp_path / "runs"), cache_dir=str(shared_cache),
                       mlflow=False)
    man = json.loads((tmp_path / "runs" / result["sweep_dir"].split("/")[-1] / "manifest.json").read_text())
    assert man["sequential"]["cluster"] == "cluster"  # stats.cluster auto: by article
    assert man["sequential"]["sizes"]["fusion.rrf_k=10"] == 55
    assert man["sequential"]["sizes"]["context.budget=4"] < 55


def test_sequential_with_a_factorial_design_is_a_spec_error(tmp_path):
    from ablate.components.contract.errors import InputError
    from ablate.flows.run.context import RunOptions, build_context
    spec = write_spec(tmp_path, SPEC.split("sweeps:")[0] + (
        "design:\n  kind: factorial\n  variables:\n"
        "    context.budget: [200, 4]\n    fusion.rrf_k: [60, 10]\n"))
    with pytest.raises(InputError) as err:
        build_context(str(spec), RunOptions(cache_dir=str(tmp_path / "c")))
    assert "cannot be combined with a factorial design" in str(err.value)
    assert "exp.yaml:8: field 'stats.sequential'" in str(err.value)  # the stats line
