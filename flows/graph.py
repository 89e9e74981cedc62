"""The stage graph: each variant's pipeline as a chain of keyed stages (DESIGN.md section 4).

A stage key hashes the stage name, the config fields that stage reads, the keys of its
inputs and a code version. Variants sharing a prefix share its stages, so an RRF-k sweep
retrieves once and a generator sweep retrieves and assembles once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from components import __version__ as components_version
from components.config import PipelineConfig
from components.tokenizer import TOKENIZER_NAME
from flows.store import stage_key
from flows.variants import Variant

# Bump a stage's version when its output for the same inputs changes.
CODE_VERSIONS = {
    "chunk": "1", "label": "1", "retrieve": "1", "fuse": "1", "rerank": "1",
    "assemble": "1", "generate": "2", "score": "2",
}
STAGE_ORDER = tuple(CODE_VERSIONS)
# Generator fields that change how a call is made, never what it returns.
_GEN_TRANSPORT = {"timeout_s", "max_retries", "concurrency", "cost_per_1k_in", "cost_per_1k_out"}
CONTEXT_FREE_GENERATORS = {"closed_book"}


@dataclass(frozen=True)
class StageNode:
    stage: str
    key: str
    deps: tuple[str, ...]
    params: dict[str, Any] = field(compare=False, hash=False)

    @property
    def label(self) -> str:
        extra = self.params.get("path")
        return f"{self.stage}:{extra}" if extra else self.stage


@dataclass
class Plan:
    nodes: dict[str, StageNode] = field(default_factory=dict)  # insertion = topological order
    by_variant: dict[str, dict[str, str]] = field(default_factory=dict)  # variant -> stage -> key

    def add(self, stage: str, deps: tuple[StageNode, ...], **params: Any) -> StageNode:
        version = f"{CODE_VERSIONS[stage]}/{components_version}"
        key = stage_key(stage, version, **params)
        node = self.nodes.get(key)
        if node is None:
            node = StageNode(stage, key, tuple(d.key for d in deps), params)
            self.nodes[key] = node
        return node

    def count(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for node in self.nodes.values():
            out[node.stage] = out.get(node.stage, 0) + 1
        return out


def _dump(model: Any, exclude: set[str] | None = None) -> dict[str, Any]:
    return model.model_dump(mode="json", exclude=exclude)


def add_variant(plan: Plan, name: str, cfg: PipelineConfig, data_fp: str, questions_fp: str,
                metrics: dict[str, Any]) -> dict[str, str]:
    """Add one variant's stages to the plan; return its stage -> key map."""
    chunk = plan.add("chunk", (), chunking=_dump(cfg.chunking), data=data_fp,
                     tokenizer=TOKENIZER_NAME)
    label = plan.add("label", (chunk,), chunk=chunk.key, questions=questions_fp)
    retrieved = {}
    for path in cfg.retrieval.paths:
        reads: dict[str, Any] = {"depth": cfg.retrieval.depth}
        if path == "bm25":
            reads.update(analyzer=cfg.retrieval.analyzer, bm25=_dump(cfg.retrieval.bm25))
        elif path == "dense":
            reads.update(dense_model=cfg.retrieval.dense_model)
        else:
            reads.update(retrieval=_dump(cfg.retrieval))
        retrieved[path] = plan.add("retrieve", (chunk,), path=path, reads=reads,
                                   chunk=chunk.key, questions=questions_fp)
    # A single path passes through fusion untouched, so fusion settings are not read.
    fusion = _dump(cfg.fusion) if len(retrieved) > 1 else None
    fuse = plan.add("fuse", tuple(retrieved.values()), fusion=fusion,
                    inputs={p: n.key for p, n in retrieved.items()})
    if cfg.rerank.method == "none":
        rerank = plan.add("rerank", (fuse,), rerank={"method": "none"}, fuse=fuse.key)
    else:
        rerank = plan.add("rerank", (fuse, chunk), rerank=_dump(cfg.rerank), fuse=fuse.key,
                          chunk=chunk.key, retrieval=_dump(cfg.retrieval, {"depth", "paths"}),
                          questions=questions_fp)
    assemble = plan.add("assemble", (rerank, chunk), context=_dump(cfg.context),
                        depth=cfg.rerank.depth, rerank=rerank.key, chunk=chunk.key,
                        tokenizer=TOKENIZER_NAME)
    gen_reads = dict(generator=_dump(cfg.generator, _GEN_TRANSPORT), prompt=_dump(cfg.prompt),
                     questions=questions_fp)
    if cfg.generator.name in CONTEXT_FREE_GENERATORS:
        generate = plan.add("generate", (), **gen_reads)
    else:
        generate = plan.add("generate", (assemble,), assemble=assemble.key, **gen_reads)
    score = plan.add("score", (label, fuse, rerank, assemble, generate), label=label.key,
                     retrieve={p: n.key for p, n in retrieved.items()},
                     fuse=fuse.key, rerank=rerank.key, assemble=assemble.key,
                     generate=generate.key, depth=cfg.rerank.depth, metrics=metrics,
                     pricing={"in": cfg.generator.cost_per_1k_in,
                              "out": cfg.generator.cost_per_1k_out})
    keys = {"chunk": chunk.key, "label": label.key, "fuse": fuse.key, "rerank": rerank.key,
            "assemble": assemble.key, "generate": generate.key, "score": score.key}
    keys.update({f"retrieve:{p}": n.key for p, n in retrieved.items()})
    plan.by_variant[name] = keys
    return keys


def build_plan(variants: list[Variant], data_fp: str, questions_fp: str,
               metrics: dict[str, Any]) -> Plan:
    plan = Plan()
    for v in variants:
        add_variant(plan, v.name, v.config, data_fp, questions_fp, metrics)
    return plan
