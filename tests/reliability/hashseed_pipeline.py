"""Run every stage on the bundled demo data and print one JSON document of the outputs.

Used by test_hash_seed.py, which runs this module in processes with different
PYTHONHASHSEED values and compares the printed bytes. Real code is used for every stage
(chunking, labels, BM25, dense search, RRF and convex fusion, the composite reranker with
all of its cheap signals, context packing, the extractive generator, scoring); only the
MiniLM encoder is replaced by a hashing encoder (sha256 of words, no Python hash()), so the
run takes seconds: the encoder's own determinism is not what is tested here.

    python -m tests.reliability.hashseed_pipeline
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "experiments" / "data" / "squad2-dev-half" / "dev-v2.0.json"
DIM = 64
FLIPPED = {"572cd638cfa9e653c3acf7d5d", "c94d2e2eee805bfeb0c5538ea", "2be60a9ac066acdf59ab3e2f5",
           "cdeabc262d2f5f2dcc8f6b4ea", "06b9839075d0dc5fe0e8a0c5c"}


class HashingEncoder:
    """Bag of words hashed (sha256) into DIM signed buckets, L2-normalised."""

    def encode(self, texts):
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                h = hashlib.sha256(word.encode()).digest()
                out[i, h[0] % DIM] += 1.0 if h[1] % 2 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1.0)


def run() -> dict:
    from ablate.components.contract.config import (
        ChunkingConfig,
        FusionConfig,
        GeneratorConfig,
        PipelineConfig,
        PromptConfig,
        RerankConfig,
        RetrievalConfig,
    )
    from ablate.components.data import load_dataset
    from ablate.components.data.tiers import select_questions
    from ablate.components.generation import make_generator
    from ablate.components.generation.extractive import extract_answer
    from ablate.components.retrieval.dense.encoder import DenseIndex
    from ablate.components.retrieval.resources import Resources
    from ablate.components.retrieval.stages import fuse_rankings, rerank_rankings, retrieve_path
    from ablate.components.text.chunking import chunk_documents
    from ablate.components.text.context import pack_context
    from ablate.components.text.labels import label_chunks
    from ablate.components.text.tokenizer import get_tokenizer

    ds = load_dataset(DEMO, format="squad")
    # the smoke tier the demo runs, plus a larger slice for the generator (it is cheap) and
    # questions whose extractive answer flipped between hash seeds 10, 21 and 26
    smoke = select_questions(ds.questions, tier="smoke", split="dev", seed=13)
    wide_ids = {q.qid for q in select_questions(ds.questions, tier="regression", split="dev",
                                                seed=13, regression_size=300)}
    wide = tuple(q for q in ds.questions if q.qid in wide_ids | FLIPPED)
    tok = get_tokenizer()
    chunks = chunk_documents(ds.documents, ChunkingConfig(size=200, overlap=32), tok)
    labels = label_chunks(chunks, wide)
    rcfg = RetrievalConfig(depth=50)
    bm25 = retrieve_path("bm25", chunks, wide, PipelineConfig(retrieval=rcfg))
    enc = HashingEncoder()
    dense_index = DenseIndex([c.chunk_id for c in chunks], enc.encode([c.text for c in chunks]))
    dense = dict(zip([q.qid for q in wide],
                     dense_index.search(enc.encode([q.question for q in wide]), rcfg.depth)))
    per_path = {"bm25": bm25, "dense": dense}
    fused = fuse_rankings(per_path, PipelineConfig(fusion=FusionConfig(rrf_k=60)))
    convex = fuse_rankings(per_path, PipelineConfig(fusion=FusionConfig(method="convex")))
    smoke_ids = {q.qid for q in smoke}
    credibility = {d.doc_id: None for d in ds.documents}
    rr_cfg = RerankConfig(method="composite", depth=20,
                          weights={"semantic": 0.4, "lexical": 0.3, "fusion": 0.2, "source": 0.1})
    reranked = rerank_rankings(smoke, chunks, {q: r for q, r in fused.items() if q in smoke_ids},
                               PipelineConfig(retrieval=rcfg, rerank=rr_cfg), Resources.fixed(enc),
                               credibility)
    by_id = {c.chunk_id: c for c in chunks}
    docs = ds.doc_by_id()
    contexts = {qid: pack_context(fused[qid] if qid not in reranked else reranked[qid], by_id,
                                  docs, 512, "skip", tok, 20) for qid in fused}
    gen = make_generator(GeneratorConfig(name="extractive", threshold=0.3), PromptConfig())
    answers = gen.generate_many([(q, contexts[q.qid]) for q in wide])
    bm25_only = {q.qid: pack_context(bm25[q.qid], by_id, docs, 512, "skip", tok, 20)
                 for q in wide}
    support = {q.qid: [extract_answer(q.question, c, 0.3) for c in (contexts[q.qid],
                                                                     bm25_only[q.qid])]
               for q in wide}

    import polars as pl

    from ablate.flows.run.scoring import score_variant
    label_rows = [(qid, g, cid, float(v)) for qid, groups in sorted(labels.items())
                  for g, gains in enumerate(groups) for cid, v in sorted(gains.items())]
    label_frame = pl.DataFrame(label_rows, schema={"qid": pl.Utf8, "group": pl.Int64,
                                                   "chunk_id": pl.Utf8, "gain": pl.Float64},
                               orient="row")
    scored = score_variant(questions=smoke, labels=label_frame, candidates=fused,
                           reranked=reranked, contexts=contexts,
                           answers={q.qid: a for q, a in zip(wide, answers)}, depth=20,
                           metrics={"ks": [1, 5, 10], "gain": "linear", "label_threshold": 0.5})
    return {
        "chunks": [[c.chunk_id, c.n_tokens] for c in chunks],
        "labels": {q: [sorted(g.items()) for g in gs] for q, gs in sorted(labels.items())},
        "bm25": bm25, "dense": dense, "rrf": fused, "convex": convex, "reranked": reranked,
        "contexts": {q: [list(c.chunk_ids), c.n_tokens, [[p.doc_id, p.start, p.end]
                                                         for p in c.passages]]
                     for q, c in sorted(contexts.items())},
        "answers": [[q.qid, a.text, a.refused] for q, a in zip(wide, answers)],
        "support": support,
        "scores": scored.drop([c for c in scored.columns if c.startswith("latency/")]
                              ).to_dicts(),
    }


if __name__ == "__main__":
    from ablate.components import catalogue
    from ablate.flows import env
    env.prepare(ROOT)
    catalogue.load()
    json.dump(run(), sys.stdout, sort_keys=True, default=repr)
