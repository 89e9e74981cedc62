"""Dense backends side by side: torch vs onnx vs onnx-int8 (`retrieval.dense_backend`).

Texts: every chunk of the bundled demo corpus (SQuAD 2.0 dev half) under token_window
chunks of --size tokens (default 128, overlap 16: 984 chunks, within MiniLM's 256-piece
window), first --texts of them. Each backend embeds them through the project's
DenseEncoder (no disk cache; a fresh encoder per round sharing the loaded runtime);
rounds alternate backends and the best round of each is kept, to damp noise from other
load on the machine. The ONNX exports are made once, in a temporary folder, before
timing (their one-off cost is printed). Then --questions demo questions (smoke tier of
the demo's split and seed) are ranked against those texts by each backend (exact search),
and each ranking is compared with torch's: mean overlap of the top 10, share of
identical top-10 lists (same ids, same order), same top 1, and recall@10 over the gold
spans (label threshold 0.5) for the questions with evidence.

    python benchmarks/dense_backends.py [--texts 1000] [--questions 100] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from ablate.components.contract.config import ChunkingConfig  # noqa: E402
from ablate.components.data import load_dataset  # noqa: E402
from ablate.components.data.tiers import select_questions  # noqa: E402
from ablate.components.metrics.retrieval import retrieval_metrics  # noqa: E402
from ablate.components.retrieval.dense.encoder import DenseEncoder, DenseIndex  # noqa: E402
from ablate.components.retrieval.dense.onnx_encoder import export_name  # noqa: E402
from ablate.components.runtime.models import minilm_path  # noqa: E402
from ablate.components.text.chunking import chunk_documents  # noqa: E402
from ablate.components.text.labels import label_chunks  # noqa: E402
from ablate.components.text.tokenizer import get_tokenizer  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "experiments/data/squad2-dev-half/dev-v2.0.json"
BACKENDS = ("torch", "onnx", "onnx-int8")
K = 10


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=1000)
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--overlap", type=int, default=16)
    ap.add_argument("--batch-size", type=int, default=64)
    args = ap.parse_args()

    import torch
    ds = load_dataset(DATA)
    chunks = chunk_documents(ds.documents, ChunkingConfig(size=args.size, overlap=args.overlap),
                             get_tokenizer())[:args.texts]
    texts = [c.text for c in chunks]
    questions = select_questions(ds.questions, tier="smoke", split="dev", seed=13,
                                 smoke_size=args.questions)
    print(f"{len(texts)} texts (demo corpus, token_window {args.size}/{args.overlap}), "
          f"{len(questions)} demo questions; batch {args.batch_size}, torch threads "
          f"{torch.get_num_threads()}, onnxruntime: one text per call on {os.cpu_count()} threads")

    tmp = Path(tempfile.mkdtemp(prefix="ablate-onnx-bench-"))
    runtimes, setup = {}, {}
    for b in BACKENDS:
        t0 = time.perf_counter()
        enc = DenseEncoder(minilm_path(), None, batch_size=args.batch_size, backend=b,
                           export_dir=tmp)
        runtimes[b] = enc.model
        enc.encode(texts[:16])  # warm-up
        setup[b] = time.perf_counter() - t0
    fingerprint = DenseEncoder(minilm_path(), None).fingerprint
    sizes = {b: (tmp / export_name(fingerprint, b) / "model.onnx").stat().st_size
             for b in BACKENDS[1:]}

    best = {b: float("inf") for b in BACKENDS}
    vecs: dict[str, np.ndarray] = {}
    for _ in range(args.rounds):
        for b in BACKENDS:
            enc = DenseEncoder(minilm_path(), None, batch_size=args.batch_size, backend=b)
            enc._model = runtimes[b]  # the loaded runtime: a cold in-memory cache each round
            t0 = time.perf_counter()
            vecs[b] = enc.encode(texts)
            best[b] = min(best[b], time.perf_counter() - t0)
            assert enc.counters["embedded"] == len(set(texts))

    labels = label_chunks(chunks, questions)
    ranked = {}
    for b in BACKENDS:
        enc = DenseEncoder(minilm_path(), None, backend=b)
        enc._model = runtimes[b]
        found = DenseIndex([c.chunk_id for c in chunks], vecs[b]).search(
            enc.encode([q.question for q in questions]), K)
        ranked[b] = [[cid for cid, _ in r] for r in found]

    ref = ranked["torch"]
    print(f"{'backend':<10}{'texts/s':>9}{'vs torch':>10}{'load+export s':>15}"
          f"{'min cos':>9}{'top-10 overlap':>16}{'same top-10':>13}{'same top-1':>12}"
          f"{'recall@10':>11}")
    for b in BACKENDS:
        rate = len(texts) / best[b]
        cos = float(((vecs[b] * vecs["torch"]).sum(axis=1)).min())
        overlap = np.mean([len(set(a) & set(r)) / K for a, r in zip(ranked[b], ref)])
        same = np.mean([a == r for a, r in zip(ranked[b], ref)])
        top1 = np.mean([a[:1] == r[:1] for a, r in zip(ranked[b], ref)])
        rec = np.mean([retrieval_metrics(ids, labels[q.qid], (K,), 0.5)[f"recall_at_{K}"]
                       for ids, q in zip(ranked[b], questions) if q.evidence])
        print(f"{b:<10}{rate:>9.1f}{rate * best['torch'] / len(texts):>9.2f}x"
              f"{setup[b]:>15.1f}{cos:>9.5f}{overlap:>16.3f}{same:>13.2f}{top1:>12.2f}"
              f"{rec:>11.3f}")
    print(f"recall@{K}: over the {sum(1 for q in questions if q.evidence)} questions with "
          f"evidence; overlaps and agreement: all {len(questions)}, against torch's rankings")
    print("model files: " + ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in sizes.items()))
    for b in BACKENDS[1:]:
        print(f"speed-up {b} / torch: {best['torch'] / best[b]:.2f}x")
    for p in sorted(tmp.rglob("*"), reverse=True):
        p.unlink() if p.is_file() else p.rmdir()
    tmp.rmdir()


if __name__ == "__main__":
    from ablate.components import catalogue
    catalogue.load()  # register the built-in components, as the CLI does
    main()
