"""The retrieval stages the sweep flow calls: retrieve per path, fuse, rerank.

A ranking is list[(chunk_id, score)], best first, ties by chunk_id ascending; a stage
returns {qid: ranking} for every question given. Every stage is a pure function of its
inputs and config (deterministic), so the flow can cache it by key.

Latency: pass `latency={}` to receive seconds per question of the online work: query
analysis + scoring for bm25 (timed per question), query encoding + exact search for
dense (batched, so the batch time is split evenly), all signals for rerank (timed per
question). Index building and chunk encoding are offline costs, not included.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Mapping, Sequence

from components.config import FusionConfig, RerankConfig, RetrievalConfig
from components.models import dense_model_path
from components.records import Chunk, Question
from components.registry import Registry
from components.retrieval import indexes
from components.retrieval.analyzer import get_analyzer
from components.retrieval.dense import DenseEncoder, DenseIndex
from components.retrieval.fusion import FUSERS, fuse
from components.retrieval.rerank import SignalContext, check_weights, rerank_one

Ranking = list[tuple[str, float]]
PathFn = Callable[[Sequence[Chunk], Sequence[Question], RetrievalConfig, "DenseEncoder | None",
                   "dict[str, float] | None"], dict[str, Ranking]]

PATHS: Registry[PathFn] = Registry("retrieval path")
RERANKERS: Registry[Callable[..., dict[str, Ranking]]] = Registry("rerank method")


@PATHS.register("bm25")
def _bm25(chunks, questions, cfg, encoder, latency) -> dict[str, Ranking]:
    index = indexes.bm25_index(chunks, cfg)
    analyzer = get_analyzer(cfg.analyzer, cfg.analyzer_options)
    out: dict[str, Ranking] = {}
    for q in questions:
        t0 = time.perf_counter()
        out[q.qid] = index.search(analyzer(q.question), cfg.depth)
        if latency is not None:
            latency[q.qid] = time.perf_counter() - t0
    return out


@PATHS.register("dense")
def _dense(chunks, questions, cfg, encoder, latency) -> dict[str, Ranking]:
    want = Path(dense_model_path(cfg.dense_model)).resolve()
    if encoder is None:
        encoder = indexes.default_encoder(cfg)
    elif encoder.model_path.resolve() != want:
        raise ValueError(f"encoder model {encoder.model_path} is not retrieval.dense_model ({want})")
    index = DenseIndex([c.chunk_id for c in chunks], encoder.encode([c.text for c in chunks]))
    t0 = time.perf_counter()
    qvecs = encoder.encode([q.question for q in questions])
    found = index.search(qvecs, cfg.depth) if len(chunks) else [[] for _ in questions]
    each = (time.perf_counter() - t0) / max(len(questions), 1)
    if latency is not None:
        latency.update({q.qid: each for q in questions})
    return {q.qid: r for q, r in zip(questions, found)}


def retrieve_path(path: str, chunks: Sequence[Chunk], questions: Sequence[Question],
                  cfg: RetrievalConfig, encoder: DenseEncoder | None,
                  *, latency: dict[str, float] | None = None) -> dict[str, Ranking]:
    """Top cfg.depth chunks of one path for each question: {qid: ranking}."""
    return PATHS.get(path)(chunks, questions, cfg, encoder, latency)


def fuse_rankings(per_path: Mapping[str, dict[str, Ranking]], cfg: FusionConfig,
                  *, latency: dict[str, float] | None = None) -> dict[str, Ranking]:
    """Fuse per-path rankings question by question (a single path passes through)."""
    FUSERS.get(cfg.method)  # unknown method -> InputError even for a single path
    qids = sorted({qid for r in per_path.values() for qid in r})
    out: dict[str, Ranking] = {}
    for qid in qids:
        t0 = time.perf_counter()
        out[qid] = fuse({p: r.get(qid, []) for p, r in per_path.items()}, cfg)
        if latency is not None:
            latency[qid] = time.perf_counter() - t0
    return out


@RERANKERS.register("none")
def _no_rerank(questions, chunks, fused, cfg, retrieval_cfg, encoder, credibility, latency):
    if latency is not None:
        latency.update({qid: 0.0 for qid in fused})
    return {qid: list(r) for qid, r in fused.items()}


@RERANKERS.register("composite")
def _composite(questions, chunks, fused, cfg, retrieval_cfg, encoder, credibility, latency):
    weights = check_weights(cfg)
    chunks = list(chunks)
    ctx = SignalContext(cfg, retrieval_cfg, chunks, encoder, credibility)
    by_id = {c.chunk_id: c for c in chunks}
    qmap = {q.qid: q for q in questions}
    missing = sorted(set(fused) - set(qmap))
    if missing:
        raise ValueError(f"fused rankings for unknown questions: {missing[:5]}")
    out: dict[str, Ranking] = {}
    for qid in fused:
        t0 = time.perf_counter()
        out[qid] = rerank_one(ctx, qmap[qid], fused[qid], by_id, weights)
        if latency is not None:
            latency[qid] = time.perf_counter() - t0
    return out


def rerank_rankings(questions: Sequence[Question], chunks: Sequence[Chunk],
                    fused: dict[str, Ranking], cfg: RerankConfig, retrieval_cfg: RetrievalConfig,
                    encoder: DenseEncoder | None, credibility: Mapping[str, float | None],
                    *, latency: dict[str, float] | None = None) -> dict[str, Ranking]:
    """method "none": the fused rankings unchanged; "composite": top cfg.depth re-scored,
    the rest kept after in fused order with their fused scores."""
    return RERANKERS.get(cfg.method)(questions, chunks, fused, cfg, retrieval_cfg, encoder,
                                     credibility, latency)
