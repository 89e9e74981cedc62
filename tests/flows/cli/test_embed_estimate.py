"""`ablate check` prices corpus embedding (issue 42, item 6): the chunks a dense stage
still to compute would embed, less those the embedding cache holds, at seconds per
chunk. Contexts are only built (nothing runs): a second or two."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np

from tests.flows.direct import write_spec
from tests.specs import TINY_SQUAD

SPEC = """
name: embed-cost
dataset: {{path: {data}, format: squad}}
tier: smoke
smoke_size: 10
split: all
seed: 3
metrics: {{ks: [1, 5], key: [final/recall_at_5]}}
baseline:
  chunking: {{size: 48, overlap: 16}}
  retrieval: {{paths: [bm25], depth: 10}}
  rerank: {{depth: 5}}
  context: {{budget: 96}}
  generator: {{name: extractive}}
sweeps:
  - variable: retrieval.paths
    values: [[bm25, dense]]
"""


def _data(folder: Path, copies: int) -> Path:
    """TINY_SQUAD with `copies` more copies of every document (texts made distinct)."""
    d = json.loads(Path(TINY_SQUAD).read_text())
    extra = []
    for i in range(copies):
        for art in d["data"]:
            a = copy.deepcopy(art)
            a["title"] = f"{a['title']} {i}"
            for p in a["paragraphs"]:
                p["context"] = f"Copy {i}. " + p["context"]
                for q in p["qas"]:
                    q["id"] = f"{q['id']}-{i}"
                    for ans in q.get("answers", []):
                        ans["answer_start"] += len(f"Copy {i}. ")
            extra.append(a)
    d["data"] += extra
    path = folder / f"squad_{copies}.json"
    path.write_text(json.dumps(d))
    return path


def _context(folder: Path, copies: int):
    from ablate.flows.run.context import RunOptions, build_context, forget_contexts
    forget_contexts()
    folder.mkdir(parents=True, exist_ok=True)
    spec = write_spec(folder, SPEC.format(data=_data(folder, copies)))
    return build_context(str(spec), RunOptions(cache_dir=str(folder / "cache")))


def _embedding_line(lines: list[str]) -> str:
    found = [x for x in lines if x.startswith("embedding:")]
    assert len(found) == 1, lines
    return found[0]


def test_check_prices_embedding_by_the_corpus_and_not_what_is_cached(tmp_path):
    from ablate.flows.cli.check import plan_lines
    from ablate.flows.plan.embed_estimate import embedding_costs

    small, large = _context(tmp_path / "small", 0), _context(tmp_path / "large", 2)
    cost_s = embedding_costs(small, set(small.plan.nodes))
    cost_l = embedding_costs(large, set(large.plan.nodes))
    assert len(cost_s) == len(cost_l) == 1  # one dense model and backend
    assert cost_s[0].missing == cost_s[0].chunks > 0
    # the corpus three times over (later windows of a copy can repeat a text: embedded once)
    assert cost_l[0].chunks > cost_s[0].chunks
    assert cost_l[0].seconds > cost_s[0].seconds > 0
    line = _embedding_line(plan_lines(small, tmp_path / "runs"))
    assert f"{cost_s[0].chunks} of {cost_s[0].chunks} chunks" in line, line
    assert not (Path(small.store.root) / "embeddings").exists() or not any(
        (Path(small.store.root) / "embeddings").iterdir())  # check writes nothing

    # every chunk embedded already (as a run would leave the cache): nothing to pay, and
    # the rate is the one the cache recorded
    from ablate.components.retrieval.dense.backends import cache_id
    from ablate.components.retrieval.dense.embed_cache import EmbeddingCache, text_key
    from ablate.components.retrieval.dense.encoder import model_fingerprint
    from ablate.components.runtime.models import dense_model_path
    from ablate.components.text.chunking import chunk_documents
    node = next(n for n in small.plan.nodes.values() if n.part == "dense")
    r = node.config.retrieval
    chunks = chunk_documents(small.dataset.documents,
                             small.plan.nodes[node.inputs["chunk"]].config.chunking,
                             small.tokenizer)
    keys = sorted({text_key(c.text) for c in chunks})
    cache = EmbeddingCache(Path(small.store.root) / "embeddings",
                           cache_id(model_fingerprint(dense_model_path(r.dense_model)),
                                    r.dense_backend))
    cache.store(keys[:-1], np.zeros((len(keys) - 1, 4), dtype=np.float32),
                np.full(len(keys) - 1, 0.5))
    (cost,) = embedding_costs(small, set(small.plan.nodes))
    assert (cost.missing, cost.seconds_per_chunk, cost.measured) == (1, 0.5, True)
    cache.store(keys[-1:], np.zeros((1, 4), dtype=np.float32), np.full(1, 0.5))
    (cost,) = embedding_costs(small, set(small.plan.nodes))
    assert cost.missing == 0 and cost.seconds == 0


def test_no_embedding_line_without_a_dense_stage_to_compute(tmp_path):
    from ablate.flows.cli.check import plan_lines
    ctx = _context(tmp_path, 0)
    todo = {k for k, n in ctx.plan.nodes.items() if n.part != "dense"}
    from ablate.flows.plan.embed_estimate import embedding_costs
    assert embedding_costs(ctx, todo) == []
    assert any(x.startswith("embedding:") for x in plan_lines(ctx, tmp_path / "runs"))


def test_every_dense_backend_declares_its_rate():
    """Issue 51.3: the calibration rates were a dict keyed by backend name in the planner,
    so a new backend silently took the fallback; now each backend declares its
    `seconds_per_chunk` and the planner reads the declaration."""
    from ablate.components import catalogue
    from ablate.components.retrieval.dense.backends import BACKENDS
    from ablate.flows.plan.embed_estimate import calibrated_rate
    catalogue.load()
    for decl in BACKENDS.declarations():
        rate = decl.info.get("seconds_per_chunk")
        assert isinstance(rate, float) and rate > 0, decl.name
        assert calibrated_rate(decl.name) == rate
