"""Chinese retrieval: BM25 under the default, zh and cjk_bigram analyzers, and dense MiniLM.

On the bundled DRCD dev set (Traditional Chinese Wikipedia), regression tier (500
questions, split dev, seed 0), token_window chunks (default 256 tokens, overlap 32, the
experiment tokenizer), span labels with threshold 0.5. Each path retrieves the top 10
chunks per question through the project's own stages (lexical.resources.lexical, retrieve_path)
and is scored by retrieval_metrics over the gold spans. Times: load (jieba's dictionary
for zh; the MiniLM model for dense), index (analysing every chunk and building BM25; for
dense, encoding every chunk, no cache), and the mean per question (analysis + scoring;
for dense, query encoding + exact search). Prints one table.

    python benchmarks/analyzers_zh.py [--size 256] [--overlap 32] [--tier regression]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from ablate.components.contract.config import ChunkingConfig, PipelineConfig, RetrievalConfig  # noqa: E402
from ablate.components.data import load_dataset  # noqa: E402
from ablate.components.data.tiers import select_questions  # noqa: E402
from ablate.components.metrics.retrieval import retrieval_metrics  # noqa: E402
from ablate.components.retrieval.dense.encoder import DenseEncoder  # noqa: E402
from ablate.components.retrieval.lexical import resources as lexical_resources  # noqa: E402
from ablate.components.retrieval.lexical.analyzer import get_analyzer  # noqa: E402
from ablate.components.retrieval.resources import Resources  # noqa: E402
from ablate.components.retrieval.stages import retrieve_path  # noqa: E402
from ablate.components.runtime.models import minilm_path  # noqa: E402
from ablate.components.text.chunking import chunk_documents  # noqa: E402
from ablate.components.text.labels import label_chunks  # noqa: E402
from ablate.components.text.tokenizer import get_tokenizer  # noqa: E402

DRCD = Path(__file__).resolve().parents[1] / "experiments/data/drcd-dev/DRCD_dev.json"
ANALYZERS = ("default", "zh", "cjk_bigram")
KS = (1, 5, 10)
THRESHOLD = 0.5


def score(rankings, questions, labels) -> dict[str, float]:
    """Mean retrieval metrics over the questions with evidence."""
    rows = [retrieval_metrics([c for c, _ in rankings[q.qid]], labels[q.qid], KS, THRESHOLD)
            for q in questions if q.evidence]
    return {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--overlap", type=int, default=32)
    ap.add_argument("--tier", default="regression")
    args = ap.parse_args()

    ds = load_dataset(DRCD)
    questions = select_questions(ds.questions, tier=args.tier, split="dev", seed=0)
    chunks = chunk_documents(ds.documents, ChunkingConfig(size=args.size, overlap=args.overlap),
                             get_tokenizer())
    labels = label_chunks(chunks, questions)
    print(f"DRCD dev: {len(ds.documents)} articles, {len(questions)} questions ({args.tier} tier),"
          f" {len(chunks)} chunks of <= {args.size} tokens (overlap {args.overlap}),"
          f" label threshold {THRESHOLD}")

    rows = []
    for name in ANALYZERS:
        cfg = PipelineConfig(retrieval=RetrievalConfig(paths=("bm25",), depth=max(KS), analyzer=name))
        t0 = time.perf_counter()
        get_analyzer(name)
        t1 = time.perf_counter()
        lexical_resources.lexical(chunks, cfg.retrieval)
        t2 = time.perf_counter()
        latency: dict[str, float] = {}
        rankings = retrieve_path("bm25", chunks, questions, cfg, latency=latency)
        rows.append((f"bm25/{name}", score(rankings, questions, labels), t1 - t0, t2 - t1,
                     float(np.mean(list(latency.values())))))

    cfg = PipelineConfig(retrieval=RetrievalConfig(paths=("dense",), depth=max(KS)))
    encoder = DenseEncoder(minilm_path(), None)  # no embedding cache: every chunk is encoded
    t0 = time.perf_counter()
    encoder.encode(["預熱"])  # loads the model
    t1 = time.perf_counter()
    latency = {}
    rankings = retrieve_path("dense", chunks, questions, cfg, Resources.fixed(encoder), latency=latency)
    t2 = time.perf_counter()
    query_total = sum(latency.values())  # query encoding + search; the rest encodes chunks
    rows.append(("dense/minilm", score(rankings, questions, labels), t1 - t0,
                 t2 - t1 - query_total, query_total / len(latency)))

    cols = ["recall_at_1", "recall_at_5", "hit_at_5", "mrr_at_10", "recall_at_10"]
    head = f"{'path':<16}" + "".join(f"{c:>13}" for c in cols)
    head += f"{'load s':>9}{'index s':>9}{'query ms':>10}"
    print(head)
    print("-" * len(head))
    for name, m, load, index, query in rows:
        print(f"{name:<16}" + "".join(f"{m[c]:>13.3f}" for c in cols)
              + f"{load:>9.2f}{index:>9.2f}{query * 1000:>10.2f}")
    print("recall@5 by path: " + ", ".join(f"{name} {m['recall_at_5']:.3f}" for name, m, *_ in rows))


if __name__ == "__main__":
    from ablate.components import catalogue
    catalogue.load()  # register the built-in components, as the CLI does
    main()
