"""Stage keys that do not involve sharding stay what they were before the shard contract
(issue 43): a bm25-only plan's keys, frozen from the code before the change. Its
components declare no `libraries`, so the keys do not depend on installed versions. A
deliberate change of these keys (a component's `version` bump) updates this table."""

from __future__ import annotations

import textwrap

from ablate.flows.plan.graph import build_plan
from ablate.flows.plan.spec_load import load_spec
from ablate.flows.plan.variants import expand

SPEC = """\
name: g
dataset: {path: d.json}
baseline:
  retrieval: {paths: [bm25], analyzer: english_stem}
  generator: {name: none}
sweeps:
  - {variable: fusion.rrf_k, values: [10]}
"""

FROZEN = {
    "chunk": "863ff2fc27e7911c178ee3d6",
    "label": "820176d25742dadef2312432",
    "retrieve:bm25": "6bb70f5bfc27b68eb413a69b",
    "fuse": "b2877703c0ee1dbbc96efa1a",
    "rerank": "3e6151f8d33b333df2e6db69",
    "assemble": "b0fef53b93a9aa970d930a9a",
    # issue 37's group_recall and context_chunks metrics (a deliberate change of the
    # score stage's metric set) moved it from e8bbab6afc53ef31fa28372b; issue 54's bucket
    # answer_wrong (score stage version 4) from 2954c532d7f778ca403888d1; issue 53's cost/*
    # metrics (cost/embed, search, rerank, generate, judge, total) from 451b9efca11893d9f9010692
    "score": "352b777c6f012d2495ba1938",
}


def test_non_sharded_stage_keys_are_unchanged(tmp_path):
    p = tmp_path / "e.yaml"
    p.write_text(textwrap.dedent(SPEC))
    plan = build_plan(expand(load_spec(p)), {"data": "data-fp", "questions": "q-fp",
                                             "tokenizer": "t", "metrics": {"ks": [5]},
                                             "labels": "span"})
    assert not [d.identity for n in plan.nodes.values() for d in n.resolved.components
                if d.libraries]  # so the keys are the machine's no matter what is installed
    assert plan.by_variant["baseline"] == FROZEN
