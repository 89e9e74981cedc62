"""The stage graph shares every stage variants have in common."""

from __future__ import annotations

import textwrap

from ablate.flows.plan.graph import build_plan
from ablate.flows.plan.spec_load import load_spec
from ablate.flows.plan.variants import expand

SPEC = """\
name: g
dataset: {path: d.json}
baseline:
  retrieval: {paths: [bm25, dense]}
  rerank: {method: composite, weights: {fusion: 1.0}}
sweeps:
  - {variable: fusion.rrf_k, values: [10, 30, 100, 200]}
  - {variable: generator.name, values: [smollm2, closed_book]}
  - {variable: chunking.size, values: [128]}
  - {variable: retrieval.paths, values: [[bm25]]}
  - {variable: rerank.weights, values: [{semantic: 1.0}]}
  - {variable: context.budget, values: [256]}
"""


def plan_of(tmp_path, text=SPEC):
    p = tmp_path / "e.yaml"
    p.write_text(textwrap.dedent(text))
    variants = expand(load_spec(p))
    return variants, build_plan(variants, {"data": "data-fp", "questions": "q-fp", "tokenizer": "t",
                                           "metrics": {"ks": [5]}, "labels": "span"})


def test_unique_stage_counts(tmp_path):
    variants, plan = plan_of(tmp_path)
    assert len(variants) == 11
    assert plan.count() == {
        "chunk": 2,      # baseline size + 128
        "label": 2,
        "retrieve": 4,   # bm25 + dense per chunking; paths=[bm25] reuses the bm25 run
        "fuse": 7,       # baseline, 4 rrf_k, chunk 128, bm25-only pass-through
        "rerank": 8,     # + the semantic-weights variant
        "assemble": 9,   # + the budget variant
        "generate": 11,  # one per variant (identical prompts are shared by the prompt cache)
        "score": 11,
    }


def test_rrf_sweep_retrieves_once(tmp_path):
    variants, plan = plan_of(tmp_path)
    base = plan.by_variant["baseline"]
    for v in variants:
        if v.variable == "fusion.rrf_k":
            keys = plan.by_variant[v.name]
            assert keys["retrieve:bm25"] == base["retrieve:bm25"]
            assert keys["retrieve:dense"] == base["retrieve:dense"]
            assert keys["fuse"] != base["fuse"]


def test_generator_sweep_shares_context(tmp_path):
    _, plan = plan_of(tmp_path)
    base = plan.by_variant["baseline"]
    smol = plan.by_variant["generator.name=smollm2"]
    assert smol["assemble"] == base["assemble"] and smol["generate"] != base["generate"]
    closed = plan.by_variant["generator.name=closed_book"]
    assert closed["generate"] != smol["generate"]
    assert plan.nodes[closed["generate"]].deps == ()


def test_single_path_ignores_fusion_settings(tmp_path):
    text = SPEC.replace("paths: [bm25, dense]", "paths: [bm25]").replace(
        "  - {variable: retrieval.paths, values: [[bm25]]}\n", "")
    _, plan = plan_of(tmp_path, text)
    base = plan.by_variant["baseline"]
    assert all(plan.by_variant[f"fusion.rrf_k={k}"]["fuse"] == base["fuse"] for k in (10, 30, 100, 200))


def test_transport_settings_do_not_change_generation_key(tmp_path):
    text = SPEC + "  - {variable: generator.timeout_s, values: [5]}\n"
    _, plan = plan_of(tmp_path, text)
    assert plan.by_variant["generator.timeout_s=5"]["generate"] == plan.by_variant["baseline"]["generate"]
