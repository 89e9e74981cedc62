"""What embedding the corpus will cost a planned sweep (`ablate check`, `ablate power`).

Embedding the chunks is most of a first dense run's time on a large corpus (12.7k
chunks: 98 % of an hour), and it is paid once per distinct chunk text and model, ever
(the embedding cache, components/retrieval/dense/embed_cache.py). So it is counted apart from
the per-question stage rates (flows/plan/estimate.py): for every stage still to compute
that runs the dense embedder over a chunking (it reads `retrieval.dense_model` and takes
chunks), the chunking's texts are made (chunking is cheap), and the texts the cache does
not hold yet, counted once per model and backend across the variants, are priced at
seconds per chunk: the median the cache recorded for that model and backend (measured
on this machine), else the rate the backend declares (`seconds_per_chunk` on its
registration, components/retrieval/dense/backends.py, from benchmarks/dense_backends.py
on the 2-core reference machine).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FALLBACK = 0.05  # a backend that declares no `seconds_per_chunk` (a plugin's)


def calibrated_rate(backend: str) -> float:
    """The seconds per chunk the dense backend declares (its registration's
    `seconds_per_chunk`), FALLBACK when it declares none."""
    from ablate.components.retrieval.dense.backends import BACKENDS
    return float(BACKENDS.declaration(backend).info.get("seconds_per_chunk", FALLBACK))


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
        rate = recorded if measured else calibrated_rate(backend)
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

