"""How the dense path shards (the contract: retrieval/shards.py): an exact top-k merge.

Allowed when the dense index it names declares `shards="exact"` (a pair scored the same
over any set of documents: `flat`); the chunk vectors are computed once, by the stage's
own encoder through the embedding cache (so they are the vectors an unsharded run scores:
the encoder's batches depend on which texts are encoded together), into a `.npy` file
beside the texts file, which workers memory-map by row range. Another index (flat16,
hnsw, ivf) is refused when shards are asked for.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ablate.components.contract.records import Chunk, Ranking
from ablate.components.retrieval.dense.ann import DENSE_INDEXES
from ablate.components.retrieval.latency import encode_timed
from ablate.components.retrieval.resources import DEFAULT
from ablate.components.retrieval.shards import EXACT_TOPK, ShardJob, ShardWork, read_rows, timed_search
from ablate.components.runtime.atomic import atomic_write
from ablate.components.text.chunk_table import id_order


def exact_indexes() -> list[str]:
    """The dense indexes that declare an exact shard merge (`shards="exact"`)."""
    return [n for n in DENSE_INDEXES.names()
            if DENSE_INDEXES.declaration(n).info.get("shards") == "exact"]


def vectors_file(texts: Path, encoder: Any, chunks: Sequence[Chunk]) -> Path:
    """The chunk vectors (float32, chunk-id order) of `encoder`, beside the texts."""
    path = texts.with_name(f"{texts.stem}-{encoder.model_id[:16]}.npy")
    if not path.exists():
        in_order = [chunks[i].text for i in id_order(chunks)]
        vectors = np.ascontiguousarray(encoder.encode(in_order), np.float32)
        buf = io.BytesIO()
        np.save(buf, vectors)
        atomic_write(path, buf.getvalue())
    return path


def dense_search(lo: int, hi: int, collection: None, texts: str, vectors: str, index: str,
                 ann: Any, queries: np.ndarray, k: int) -> tuple[list[Ranking], float]:
    """The shard's dense index `index` (its rows of the vectors file, memory-mapped);
    every query's top k and the seconds the search took."""
    ids, _ = read_rows(texts, lo, hi, text=False)
    built = DENSE_INDEXES.get(index)(ids, np.load(vectors, mmap_mode="r")[lo:hi], ann)
    return timed_search(built.search, queries, k)


class DenseSharding:
    merge = EXACT_TOPK

    def refuses(self, cfg: Any) -> str | None:
        index = cfg.retrieval.dense_index
        if DENSE_INDEXES.declaration(index).info.get("shards") == "exact":
            return None
        return (f"dense index '{index}' does not shard exactly (dense indexes that do: "
                f"{', '.join(exact_indexes()) or 'none'})")

    def work(self, job: ShardJob) -> ShardWork:
        r = job.cfg.retrieval
        encoder = (job.res or DEFAULT).encoder(r.dense_model, r.dense_backend)
        vectors = vectors_file(Path(job.texts), encoder, job.chunks)
        queries = encode_timed(encoder, [q.question for q in job.questions])
        return ShardWork(dense_search, (str(job.texts), str(vectors), r.dense_index, r.ann,
                                        queries.vectors, r.depth),
                         queries.seconds.tolist(),
                         [q.qid for q, hit in zip(job.questions, queries.reused) if hit])


DENSE = DenseSharding()

