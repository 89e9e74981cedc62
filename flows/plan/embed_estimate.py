"""What embedding the corpus will cost a planned sweep (`ablate check`, `ablate power`).

Embedding the chunks is most of a first dense run's time on a large corpus (12.7k
chunks: 98 % of an hour), and it is paid once per distinct chunk text and model, ever
(the embedding cache, components/retrieval/dense/embed_cache.py). So it is counted apart from
the per-question stage rates (flows/plan/estimate.py): for every stage still to compute
that runs the dense embedder over a chunking (it reads `retrieval.dense_model` and takes
chunks), the chunking's texts are made (chunking is cheap), and the texts the cache does
not hold yet, counted once per model and backend across the variants, are priced at
seconds per chunk: the median the cache recorded for that model and backend (measured
on this machine), else a calibrated default per backend (CALIBRATED, from
benchmarks/dense_backends.py on the 2-core reference machine).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Seconds per chunk of MiniLM (all-MiniLM-L6-v2) at the default 256-token chunks on the
# 2-core reference machine, used until the cache has recorded this machine's own. From
# `benchmarks/dense_backends.py --texts 300 --questions 20 --rounds 1` (2026-12-04, load
# average 3.8-6.4): torch 6.6, onnx 7.3, onnx-int8 11.8 texts/s at 128-token chunks, i.e.
# 0.15 / 0.14 / 0.085 s per chunk under that load; the demo's three encodings (issue 42:
# 72 s on about 3k chunks when quiet) give about 0.025 s. A 256-token chunk costs about
# twice a 128-token one: 0.05 s for torch, the backends scaled by their measured ratio.
CALIBRATED = {"torch": 0.05, "onnx": 0.045, "onnx-int8": 0.028}
FALLBACK = 0.05  # a backend not calibrated


@dataclass(frozen=True)
class EmbedCost:
    model: str
    backend: str
    chunks: int  # distinct chunk texts the stages embed
    missing: int  # of them, not in the embedding cache
    seconds_per_chunk: float
    measured: bool  # the rate is the cache's record on this machine

    @property
    def seconds(self) -> float:
        return self.missing * self.seconds_per_chunk


def _embeds_chunks(node: Any) -> bool:
    return "retrieval.dense_model" in node.resolved.reads and "chunk" in node.inputs


def embedding_costs(ctx: Any, todo_keys: set[str]) -> list[EmbedCost]:
    """The embedding cost of the stages `todo_keys` (plan keys still to compute), per
    dense model and backend."""
    from ablate.components.retrieval.dense.backends import cache_id
    from ablate.components.retrieval.dense.embed_cache import EmbeddingCache, cache_folder, text_key
    from ablate.components.runtime.digest import model_identity  # the encoder's model_fingerprint
    from ablate.components.runtime.models import dense_model_path
    from ablate.components.text.chunking import chunk_documents

    wanted: dict[tuple[str, str], set[str]] = {}  # (model, backend) -> chunk stage keys
    for key in todo_keys:
        node = ctx.plan.nodes[key]
        if _embeds_chunks(node):
            r = node.config.retrieval
            wanted.setdefault((r.dense_model, r.dense_backend), set()).add(node.inputs["chunk"])
    texts_of: dict[str, set[str]] = {}
    out = []
    root = Path(ctx.store.root) / "embeddings"
    for (model, backend), chunk_keys in sorted(wanted.items()):
        texts: set[str] = set()
        for ck in sorted(chunk_keys):
            if ck not in texts_of:
                cfg = ctx.plan.nodes[ck].config.chunking
                texts_of[ck] = {text_key(c.text) for c in
                                chunk_documents(ctx.dataset.documents, cfg, ctx.tokenizer)}
            texts |= texts_of[ck]
        model_id = cache_id(model_identity(dense_model_path(model)), backend)
        cache = (EmbeddingCache(root, model_id) if cache_folder(root, model_id).is_dir()
                 else None)  # `check` writes nothing: no folder made for an empty cache
        missing = len(texts) if cache is None else sum(not cache.has(k) for k in texts)
        recorded = math.nan if cache is None else cache.median_seconds()
        measured = math.isfinite(recorded) and recorded > 0
        rate = recorded if measured else CALIBRATED.get(backend, FALLBACK)
        out.append(EmbedCost(model, backend, len(texts), missing, rate, measured))
    return out


def embedding_lines(costs: list[EmbedCost]) -> list[str]:
    """The lines `ablate check` prints under its estimate."""
    from ablate.flows.plan.estimate import duration
    lines = []
    for c in costs:
        how = ("measured" if c.measured else "calibrated default")
        lines.append(f"embedding: about {duration(c.seconds)} for {c.missing} of {c.chunks} "
                     f"chunks not in the embedding cache ({c.model}, {c.backend}, "
                     f"{c.seconds_per_chunk * 1000:.1f} ms per chunk, {how})")
    return lines

