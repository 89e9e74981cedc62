"""The retrieval stages the sweep flow calls: retrieve per path, fuse, rerank.

A ranking is list[(chunk_id, score)], best first, ties by chunk_id ascending; a stage
returns {qid: ranking} for every question given. Every stage is a pure function of its
inputs and the (typed) pipeline config, so the flow can cache it by key. Paths and
rerankers are registered with the config fields they read (ablate.components.contract.registry).

Latency: pass `latency={}` to receive seconds per question of the online work: query
analysis + scoring + top-k for bm25, query encoding + index search for dense (both
batched, so the batch time is split evenly: declared with latency="batch_mean"), all
signals for rerank (timed per question; the semantic signal's own encoding as for dense).
Index building, chunk encoding and numba's one-time compile of the BM25 kernel are
offline costs, not included (the dense path returns its index's build seconds apart,
latency.IndexedRankings, with the exact top k when `retrieval.dense_index` is approximate, so
recall against flat can be scored). Latency is what computing costs: a query vector served
by the embedding cache counts the encode seconds recorded when it was computed, so a warm
cache gives the figure a cold one would; pass a latency.StageSeconds to also receive the
questions whose seconds were recorded earlier (`reused`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Protocol, Sequence, TypeAlias

from ablate.components.contract.config import PipelineConfig
from ablate.components.contract.records import Chunk, Question, Ranking
from ablate.components.contract.registry import Registry
from ablate.components.retrieval.fusion import fuse
from ablate.components.retrieval.latency import mark_reused
from ablate.components.retrieval.rerank import SignalContext, check_weights, rerank_one
from ablate.components.retrieval.resources import DEFAULT, Resources
from ablate.components.text.chunk_table import chunk_map

Latency: TypeAlias = "dict[str, float] | None"
PathFn = Callable[[Sequence[Chunk], Sequence[Question], PipelineConfig, Resources, Latency],
                  dict[str, Ranking]]

PATHS: Registry[PathFn] = Registry("retrieval path", config_field="retrieval.paths")


@dataclass(frozen=True)
class RerankJob:
    """What a reranker is given: the questions, the chunking's chunks, the fused rankings
    ({qid: ranking}), the config (undeclared fields at their defaults), shared resources,
    the documents' credibility and, when asked for, a dict to fill with seconds per
    question."""

    questions: Sequence[Question]
    chunks: Sequence[Chunk]
    fused: Mapping[str, Ranking]
    cfg: PipelineConfig
    res: Resources = DEFAULT
    credibility: Mapping[str, float | None] = field(default_factory=dict)
    latency: dict[str, float] | None = None


class Reranker(Protocol):
    """A reranker: {qid: ranking} for every question of `job.fused`, best first."""

    def __call__(self, job: RerankJob) -> dict[str, Ranking]: ...


RERANKERS: Registry[Reranker] = Registry("reranker", config_field="rerank.method")


def retrieve_path(path: str, chunks: Sequence[Chunk], questions: Sequence[Question],
                  cfg: PipelineConfig, res: Resources = DEFAULT,
                  *, latency: dict[str, float] | None = None) -> dict[str, Ranking]:
    """Top `retrieval.depth` chunks of one path for each question: {qid: ranking}."""
    return PATHS.get(path)(chunks, questions, cfg, res, latency)


def fuse_rankings(per_path: Mapping[str, dict[str, Ranking]], cfg: PipelineConfig,
                  *, latency: dict[str, float] | None = None) -> dict[str, Ranking]:
    """Fuse per-path rankings question by question (a single path passes through)."""
    qids = sorted({qid for r in per_path.values() for qid in r})
    out: dict[str, Ranking] = {}
    for qid in qids:
        t0 = time.perf_counter()
        out[qid] = fuse({p: r.get(qid, []) for p, r in per_path.items()}, cfg.fusion)
        if latency is not None:
            latency[qid] = time.perf_counter() - t0
    return out


@RERANKERS.register("none")
def _no_rerank(job: RerankJob) -> dict[str, Ranking]:
    if job.latency is not None:
        job.latency.update({qid: 0.0 for qid in job.fused})
    return {qid: list(r) for qid, r in job.fused.items()}


@RERANKERS.register("composite", reads=("rerank.depth", "rerank.weights"),
                    uses={"rerank.weights": "rerank signal"})
def _composite(job: RerankJob) -> dict[str, Ranking]:
    weights = check_weights(job.cfg.rerank)
    ctx = SignalContext(job.cfg, job.chunks, job.res, job.credibility)
    depth = job.cfg.rerank.depth  # the candidates a signal reads: each ranking's head
    by_id = chunk_map(job.chunks, {cid for r in job.fused.values() for cid, _ in r[:depth]})
    qmap = {q.qid: q for q in job.questions}
    missing = sorted(set(job.fused) - set(qmap))
    if missing:
        raise ValueError(f"fused rankings for unknown questions: {missing[:5]}")
    out: dict[str, Ranking] = {}
    for qid, ranking in job.fused.items():
        t0 = time.perf_counter()
        out[qid] = rerank_one(ctx, qmap[qid], ranking, by_id, weights)
        if job.latency is not None:  # with what signals counted in place of the time taken
            job.latency[qid] = time.perf_counter() - t0 + ctx.adjust.get(qid, 0.0)
    mark_reused(job.latency, ctx.reused)
    return out


def rerank_rankings(questions: Sequence[Question], chunks: Sequence[Chunk],
                    fused: dict[str, Ranking], cfg: PipelineConfig, res: Resources = DEFAULT,
                    credibility: Mapping[str, float | None] | None = None,
                    *, latency: dict[str, float] | None = None) -> dict[str, Ranking]:
    """method "none": the fused rankings unchanged; "composite": top `rerank.depth`
    re-scored, the rest kept after in fused order with their fused scores."""
    job = RerankJob(questions, chunks, fused, cfg, res, credibility or {}, latency)
    return RERANKERS.get(cfg.rerank.method)(job)
