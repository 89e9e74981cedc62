"""Scaling: the steps one at a time, the whole flow, sharded BM25 and ANN dense indexes.

1. Steps (`--sizes`, default 1k to 1M chunks): wall time and peak memory of chunking, BM25
   indexing and retrieval, and dense retrieval (precomputed embeddings) on a synthetic
   corpus. Words drawn from a Zipf distribution (s = 1.1, fixed seed) over the whole-word
   entries of the MiniLM WordPiece vocabulary (one token per word), 32 words per chunk,
   16 chunks per document; queries: 8 words from the same distribution. Dense: random
   L2-normalised 384-d float32 vectors through ablate.components.retrieval.dense.encoder.DenseIndex.
   Each size runs in a fresh Python process. Per step: wall time, and peak resident
   memory of the process during the step (Linux VmHWM, reset before each step via
   /proc/self/clear_refs) with the growth over the resident size when the step started.
2. The flow (`--flow-sizes`, default 10k to 1M documents): `ablate run` of a retrieval-only
   BM25 sweep, as a user runs it (benchmarks/scaling_flow.py: its wall time and the peak
   memory of its process tree, split into during and after the stages).
3. `--sharded`: benchmarks/sharded.py (sharded against one index to 1M chunks, equal
   rankings counted, and 10M chunks sharded over a local cluster of 4 workers).
4. `--ann`: benchmarks/ann.py (flat, HNSW and IVF dense indexes: build and search seconds,
   recall@10 against flat).

The exponent columns fit the growth: b of time ~ n^b between consecutive sizes.

    python benchmarks/scaling.py [--sizes 1000 10000 100000 1000000] [--queries 200] [--k 10]
        [--flow-sizes 10000 100000 1000000] [--sharded] [--ann] [--skip-steps]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORDS_PER_CHUNK, CHUNKS_PER_DOC, QUERY_WORDS, DIM = 32, 16, 8, 384
STEPS = ("chunking", "bm25_index", "bm25_retrieve", "dense_index", "dense_retrieve")


def _mem() -> tuple[float, float]:
    """(current RSS, peak RSS since the last reset) in MiB."""
    vals = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            vals[line[:5]] = int(line.split()[1]) / 1024
    return vals["VmRSS"], vals["VmHWM"]


class Step:
    """Times a block and records the peak resident memory reached inside it."""

    def __init__(self, name: str, out: dict) -> None:
        self.name, self.out = name, out

    def __enter__(self):
        Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
        self.rss0, _ = _mem()
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        t = time.perf_counter() - self.t0
        _, peak = _mem()
        self.out[self.name] = {"s": t, "peak_mib": peak, "added_mib": peak - self.rss0}


def inner(n_chunks: int, n_queries: int, k: int, seed: int = 0) -> dict:
    """All steps at one size, in this (fresh) process."""
    import numpy as np

    from ablate.components.contract.config import ChunkingConfig
    from ablate.components.contract.records import Document
    from ablate.components.retrieval.dense.encoder import DenseIndex
    from ablate.components.retrieval.lexical.analyzer import get_analyzer
    from ablate.components.retrieval.lexical.bm25 import BM25Index
    from ablate.components.text.chunking import chunk_documents
    from ablate.components.text.tokenizer import get_tokenizer

    tok = get_tokenizer()
    vocab = sorted(w for w in tok._hf.get_vocab() if w.isalpha() and w.isascii() and len(w) > 1)
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, len(vocab) + 1) ** 1.1
    p /= p.sum()
    words = np.asarray(vocab, dtype=object)
    n_docs = math.ceil(n_chunks / CHUNKS_PER_DOC)
    per_doc = WORDS_PER_CHUNK * CHUNKS_PER_DOC
    docs = [Document(f"d{i:07d}", " ".join(words[rng.choice(len(vocab), per_doc, p=p)]))
            for i in range(n_docs)]
    queries = [" ".join(words[rng.choice(len(vocab), QUERY_WORDS, p=p)]) for _ in range(n_queries)]
    out: dict = {}

    with Step("chunking", out):
        chunks = chunk_documents(docs, ChunkingConfig(size=WORDS_PER_CHUNK, overlap=0), tok)
    del docs
    out["chunks"] = len(chunks)
    an = get_analyzer("default")
    with Step("bm25_index", out):  # analysis (tokenise + stem) and index build
        # as the bm25 path builds it (lexical/resources.py): analysed chunk by chunk as read
        index = BM25Index([c.chunk_id for c in chunks], map(an, (c.text for c in chunks)))
    ids = [c.chunk_id for c in chunks]
    del chunks
    index.prepare(len(queries))  # untimed: numba's compile or cache load, when used
    with Step("bm25_retrieve", out):  # query analysis + search_many, as the bm25 path does
        index.search_many(an.batch(queries), k)
    del index

    vecs = rng.standard_normal((len(ids), DIM), dtype=np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    qv = rng.standard_normal((n_queries, DIM), dtype=np.float32)
    qv /= np.linalg.norm(qv, axis=1, keepdims=True)
    with Step("dense_index", out):
        dense = DenseIndex(ids, vecs)
    del vecs
    with Step("dense_retrieve", out):
        dense.search(qv, k)
    return out


def run_size(n: int, queries: int, k: int) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--inner", str(n), str(queries), str(k)],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"size {n} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def growth(results: dict[int, dict], step: str, key: str) -> str:
    """Exponent b of key ~ n^b between consecutive sizes ('1.0' = linear)."""
    sizes = sorted(results)
    out = []
    for a, b in zip(sizes, sizes[1:]):
        va, vb = results[a][step][key], results[b][step][key]
        out.append(f"{math.log(vb / va) / math.log(b / a):.2f}" if va > 0 and vb > 0 else "-")
    return " / ".join(out)


def measure(sizes: list[int], queries: int = 200, k: int = 10) -> dict[int, dict]:
    return {n: run_size(n, queries, k) for n in sizes}


def table(results: dict[int, dict], queries: int) -> list[str]:
    sizes = sorted(results)
    lines = [f"synthetic corpus: Zipf(1.1) words, {WORDS_PER_CHUNK} per chunk; {queries} queries; "
             f"dense {DIM}-d float32 precomputed",
             f"{'step':<15}" + "".join(f"{f'{n:,} s':>12}{'peak MiB':>10}" for n in sizes)
             + f"  {'time ~ n^b'}"]
    for step in STEPS:
        row = f"{step:<15}"
        for n in sizes:
            r = results[n][step]
            row += f"{r['s']:>12.2f}{r['peak_mib']:>10.0f}"
        lines.append(row + f"  {growth(results, step, 's')}")
    lines.append("growth of the step's added memory ~ n^b: " + ", ".join(
        f"{s} {growth(results, s, 'added_mib')}" for s in ("chunking", "bm25_index", "dense_index")))
    return lines


def flow_table(rows: list[dict]) -> list[str]:
    """The whole flow per size, with the exponents of wall time and peak memory."""
    lines = ["the flow: ablate run, retrieval-only BM25 sweep (baseline + 1 variant, 200 "
             "questions), one 30-word document per chunk; peak over the process tree",
             f"{'documents':>10}{'wall s':>9}{'peak GiB':>10}{'after GiB':>10}{'chunk s':>9}"
             f"{'label s':>9}{'retrieve s':>11}{'tail s':>8}  peak while"]
    for r in rows:
        sec = r["seconds"]
        lines.append(f"{r['docs']:>10,}{r['wall_s']:>9.1f}{r['peak_gib']:>10.2f}{r['after_gib']:>10.2f}"
                     f"{sec.get('chunk', 0):>9.1f}{sec.get('label', 0):>9.1f}"
                     f"{sec.get('retrieve', 0):>11.1f}{r['after_s']:>8.1f}  "
                     f"{', '.join(r['at_peak']) or 'no stage'}")
    by = {r["docs"]: {"wall": {"s": r["wall_s"]}, "peak": {"s": r["peak_gib"]},
                      "chunk": {"s": r["seconds"].get("chunk", 0.0)}} for r in rows}
    if len(by) > 1:
        lines.append("growth ~ n^b: " + ", ".join(f"{k} {growth(by, k, 's')}"
                                                   for k in ("wall", "chunk", "peak")))
    big = max(rows, key=lambda r: r["docs"])
    lines.append(f"targets at {big['docs']:,}: peak <= 4 GiB: {big['peak_gib']:.2f} "
                 f"({'ok' if big['peak_gib'] <= 4 else 'MISSED'}); chunking < 60 s: "
                 f"{big['seconds'].get('chunk', 0):.1f} "
                 f"({'ok' if big['seconds'].get('chunk', 0) < 60 else 'MISSED'})")
    return lines


def echo(script: str, args: list[str]) -> None:
    """Run another benchmark script and print its output as it comes."""
    print(f"\n== benchmarks/{script} {' '.join(args)}", flush=True)
    code = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *args],
                          cwd=ROOT, check=False).returncode
    if code:
        sys.exit(f"benchmarks/{script} failed ({code})")


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--inner":
        sys.path.insert(0, str(ROOT))
        print(json.dumps(inner(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000, 1_000_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--skip-steps", action="store_true", help="no step table")
    ap.add_argument("--flow-sizes", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--work", type=Path, default=Path("/tmp/ablate-scale"))
    ap.add_argument("--sharded", action="store_true", help="also run benchmarks/sharded.py")
    ap.add_argument("--ann", action="store_true", help="also run benchmarks/ann.py")
    args = ap.parse_args()
    t0 = time.perf_counter()
    if not args.skip_steps:
        results = measure(args.sizes, args.queries, args.k)
        print("\n".join(table(results, args.queries)), flush=True)
    if args.flow_sizes:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        import scaling_flow
        rows = [scaling_flow.measure(n, args.work) for n in args.flow_sizes]
        print("\n" + "\n".join(flow_table(rows)), flush=True)
    if args.sharded:
        echo("sharded.py", [])
    if args.ann:
        echo("ann.py", [])
    print(f"(total {time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    from ablate.components import catalogue
    catalogue.load()  # register the built-in components, as the CLI does
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    main()
