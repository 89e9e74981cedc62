"""Composite reranking: score = sum over named signals of weight x signal.

Signals (registered in SIGNALS), each computed over the top `depth` fused candidates
of one question:
- `semantic`: bi-encoder cosine of question and chunk (raw, in [-1, 1]).
- `lexical`: BM25 of question vs chunk (corpus-wide idf), min-max normalised over the
  candidates.
- `fusion`: the fused score (the base relevance), min-max normalised over the candidates.
- `source`: credibility of the chunk's document, `default_credibility` when missing.
- `cross_encoder`: a local sentence-transformers CrossEncoder's score of
  (question, chunk), min-max normalised over the candidates.
Min-max maps a constant list to all 1. Signals with weight 0 are not computed.
The seeds' "0.6 model / 0.3 base / 0.1 source" is
{"cross_encoder": 0.6, "fusion": 0.3, "source": 0.1} (or "semantic" as the model).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ablate.components.contract.config import PipelineConfig, RerankConfig
from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Chunk, Question, Ranking
from ablate.components.contract.registry import Registry
from ablate.components.retrieval import indexes
from ablate.components.retrieval.fusion import minmax
from ablate.components.retrieval.resources import DEFAULT, Resources


@dataclass
class SignalContext:
    """What signals may read; costly objects are built on first use."""

    cfg: PipelineConfig
    chunks: Sequence[Chunk]
    res: Resources = DEFAULT
    credibility: Mapping[str, float | None] = field(default_factory=dict)
    _cache: dict[str, Any] = field(default_factory=dict)  # name -> object built on first use
    # latency: per question, seconds to add to the time the signals took (a cached query
    # vector's recorded encode seconds, less the offline work done meanwhile), and the
    # questions whose seconds include work recorded earlier
    adjust: dict[str, float] = field(default_factory=dict)
    reused: set[str] = field(default_factory=set)

    def count_instead(self, qid: str, took: float, seconds: float, reused: bool) -> None:
        """Count `seconds` of online work in place of `took` seconds spent (`reused`:
        those seconds were recorded earlier)."""
        self.adjust[qid] = self.adjust.get(qid, 0.0) + seconds - took
        if reused:
            self.reused.add(qid)


Signal = Callable[[SignalContext, Question, list[Chunk], np.ndarray], np.ndarray]
SIGNALS: Registry[Signal] = Registry("rerank signal", config_field="rerank.weights")


@SIGNALS.register("fusion")
def fusion(ctx: SignalContext, q: Question, cands: list[Chunk], fused: np.ndarray) -> np.ndarray:
    return minmax(fused)


@SIGNALS.register("source", reads=("rerank.default_credibility",))
def source(ctx: SignalContext, q: Question, cands: list[Chunk], fused: np.ndarray) -> np.ndarray:
    default = ctx.cfg.rerank.default_credibility
    vals = []
    for c in cands:
        v = ctx.credibility.get(c.doc_id)
        vals.append(default if v is None else float(v))
    return np.asarray(vals, dtype=np.float64)


@SIGNALS.register("cross_encoder", reads=("rerank.cross_encoder",), model_bound=True,
                  files=("rerank.cross_encoder",))
def cross(ctx: SignalContext, q: Question, cands: list[Chunk], fused: np.ndarray) -> np.ndarray:
    if not ctx.cfg.rerank.cross_encoder:
        raise InputError("the cross_encoder signal needs rerank.cross_encoder "
                         "(a local CrossEncoder model directory)", field="rerank.weights")
    model = indexes.cross_encoder(ctx.cfg.rerank.cross_encoder)
    scores = model.predict([(q.question, c.text) for c in cands], show_progress_bar=False,
                           convert_to_numpy=True)
    return minmax(np.asarray(scores, dtype=np.float64).reshape(len(cands)))


def check_weights(cfg: RerankConfig) -> dict[str, float]:
    """The signals to compute (weight > 0), in name order; the values were checked with
    the config (config.check_weights), the names are checked here."""
    w = cfg.weights
    unknown = sorted(k for k in w if k not in SIGNALS)
    if unknown:
        raise InputError(f"unknown rerank signal(s) {unknown} (known: {', '.join(SIGNALS.names())})",
                         field="rerank.weights")
    used = {k: float(v) for k, v in sorted(w.items()) if v > 0}
    if not used:
        raise InputError("the composite reranker has no signal with a weight", field="rerank.weights")
    if "cross_encoder" in used and not cfg.cross_encoder:
        raise InputError("weight on cross_encoder but rerank.cross_encoder is not set",
                         field="rerank.weights")
    return used


def rerank_one(ctx: SignalContext, q: Question, fused: Ranking,
               chunk_by_id: Mapping[str, Chunk], weights: Mapping[str, float]) -> Ranking:
    """Re-score the top cfg.depth of `fused`; the rest follow in fused order, fused scores."""
    depth = ctx.cfg.rerank.depth
    head, tail = fused[:depth], fused[depth:]
    if not head:
        return list(fused)
    cands = [chunk_by_id[d] for d, _ in head]
    base = np.asarray([s for _, s in head], dtype=np.float64)
    total = np.zeros(len(head), dtype=np.float64)
    for name, w in weights.items():
        total += w * SIGNALS.get(name)(ctx, q, cands, base)
    scored = sorted(((d, float(s)) for (d, _), s in zip(head, total)), key=lambda x: (-x[1], x[0]))
    return scored + list(tail)
