"""Sharded BM25 on a local Dask cluster against one index: equal rankings, wall time and
per-worker peak memory, on the synthetic corpus of benchmarks/scaling.py.

Corpus (fixed seed, generated once into the work folder as a chunk-texts parquet file,
the file flows/run/sharded.py writes for a sweep): words drawn from a Zipf distribution
(s = 1.1) over the whole-word entries of the MiniLM WordPiece vocabulary, 32 words per
chunk; queries: 8 words from the same distribution. A size n is the file's first n rows.

Per size: one BM25 index over the n chunks in a fresh process (its wall time: reading,
analysing, building, searching; its peak RSS), then the same rows over `--shards` shards
on a LocalCluster of `--workers` single-threaded worker processes (restarted before each
run): both phases (statistics, then index and search), the merge, wall time, and each
worker's peak RSS (VmHWM). Rankings: top k of every query, ids and scores; "equal" counts
the queries whose sharded top k is identical to the single index's. `--big` runs sharded
only (the workers read their rows of the file from disk; nothing else holds the corpus).

    python benchmarks/sharded.py [--sizes 100000 1000000] [--big 10000000] [--workers 4]
        [--shards 4] [--big-shards 16] [--queries 200] [--k 10] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import pickle
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
WORDS_PER_CHUNK, QUERY_WORDS, BLOCK = 32, 8, 100_000


def _zipf(seed: int):
    import numpy as np

    from ablate.components.text.tokenizer import get_tokenizer
    vocab = sorted(w for w in get_tokenizer()._hf.get_vocab()
                   if w.isalpha() and w.isascii() and len(w) > 1)
    p = 1.0 / np.arange(1, len(vocab) + 1) ** 1.1
    return np.asarray(vocab, dtype=object), p / p.sum(), np.random.default_rng(seed)


def corpus(path: Path, n: int) -> Path:
    """The first n chunks (ids c000000000...), written a block at a time (kept if large enough)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ablate.flows.run.sharded import ROW_GROUP
    if path.exists() and pq.ParquetFile(path).metadata.num_rows >= n:
        return path
    words, p, rng = _zipf(0)
    tmp = path.with_suffix(".tmp")
    with pq.ParquetWriter(tmp, pa.schema([("chunk_id", pa.string()), ("text", pa.string())])) as w:
        for a in range(0, n, BLOCK):
            b = min(a + BLOCK, n)
            picks = words[rng.choice(len(words), (b - a, WORDS_PER_CHUNK), p=p)]
            w.write_table(pa.table({"chunk_id": [f"c{i:09d}" for i in range(a, b)],
                                    "text": [" ".join(r) for r in picks.tolist()]}),
                          row_group_size=ROW_GROUP)
    tmp.replace(path)
    return path


def queries(n: int) -> list[str]:
    words, p, _ = _zipf(0)
    import numpy as np
    rng = np.random.default_rng(1)
    return [" ".join(words[rng.choice(len(words), QUERY_WORDS, p=p)]) for _ in range(n)]


def _peak_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def unsharded(path: Path, n: int, qs: list[str], k: int, out: Path) -> dict:
    """In this (fresh) process: one index over rows [0, n), its top k of every query."""
    from ablate.components.retrieval.lexical.analyzer import get_analyzer
    from ablate.components.retrieval.lexical.bm25 import BM25Index
    from ablate.components.retrieval.shards import read_rows
    t0 = time.perf_counter()
    ids, texts = read_rows(path, 0, n)
    an = get_analyzer("default")
    index = BM25Index(ids, map(an, texts))
    del texts
    built = time.perf_counter() - t0
    index.prepare(len(qs))
    t1 = time.perf_counter()
    found = index.search_many([an(q) for q in qs], k)
    searched = time.perf_counter() - t1
    out.write_bytes(pickle.dumps(found))
    return {"s": built + searched, "build_s": built, "search_s": searched, "peak_mib": _peak_mib()}


def sharded(client, path: Path, n: int, shards: int, qs: list[str], k: int) -> tuple[dict, list]:
    from ablate.components.contract.config import PipelineConfig
    from ablate.components.retrieval.lexical.sharding import BM25
    from ablate.components.retrieval.shards import ShardJob, merge_shards, shard_bounds
    from ablate.flows.run import sharded as sh
    client.restart()
    client.run(_reset_peak)
    cfg = PipelineConfig(retrieval={"paths": ["bm25"], "depth": k, "analyzer": "default"})
    questions = [SimpleNamespace(qid=str(i), question=q) for i, q in enumerate(qs)]
    t0 = time.perf_counter()
    bounds = shard_bounds(n, shards)
    work = BM25.work(ShardJob(path, bounds, [], questions, cfg))  # the path's declared Sharding
    per_shard, search_s = sh.run_shards(client, work, bounds)
    found = merge_shards(per_shard, k)
    wall = time.perf_counter() - t0
    peaks = sorted(client.run(_peak_mib).values())
    return {"s": wall, "search_s": search_s, "worker_peak_mib": peaks}, found


def table(rows: list[dict], args) -> list[str]:
    lines = [f"BM25, synthetic Zipf(1.1) corpus, {WORDS_PER_CHUNK} words per chunk; "
             f"{args.queries} queries, top {args.k}; local Dask cluster of {args.workers} "
             "single-threaded worker processes on this machine",
             "| chunks | shards | one index: wall s | one index: peak MiB | sharded: wall s "
             "| sharded: max worker peak MiB | all workers' peaks MiB | equal top-k |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        one = r.get("one")
        lines.append(
            f"| {r['n']:,} | {r['shards']} | {one['s']:.1f} | {one['peak_mib']:.0f} | "
            if one else f"| {r['n']:,} | {r['shards']} | - | - | ")
        s = r["sharded"]
        lines[-1] += (f"{s['s']:.1f} | {max(s['worker_peak_mib']):.0f} | "
                      f"{' '.join(f'{m:.0f}' for m in s['worker_peak_mib'])} | "
                      f"{r['equal'] if one else '-'} |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    ap.add_argument("--big", type=int, default=0, help="a sharded-only size (e.g. 10000000)")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--big-shards", type=int, default=16)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--work", type=Path, default=Path("/tmp/ablate-bench-sharded"))
    ap.add_argument("--inner", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    path = args.work / "corpus.parquet"
    qs = queries(args.queries)
    if args.inner:
        n, out = int(args.inner[0]), Path(args.inner[1])
        print(json.dumps(unsharded(path, n, qs, int(args.inner[2]), out)))
        return
    t0 = time.perf_counter()
    corpus(path, max(args.sizes + [args.big]))
    print(f"corpus: {time.perf_counter() - t0:.0f} s", flush=True)
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                           dashboard_address=None, memory_limit=0)
    client = Client(cluster)
    rows = []
    for n in args.sizes:
        out = args.work / f"one-{n}.pickle"
        proc = subprocess.run([sys.executable, __file__, "--work", str(args.work), "--queries",
                               str(args.queries), "--inner", str(n), str(out), str(args.k)],
                              capture_output=True, text=True, check=True, cwd=ROOT)
        one = json.loads(proc.stdout.strip().splitlines()[-1])
        s, found = sharded(client, path, n, args.shards, qs, args.k)
        equal = sum(a == b for a, b in zip(pickle.loads(out.read_bytes()), found))
        rows.append({"n": n, "shards": args.shards, "one": one, "sharded": s,
                     "equal": f"{equal}/{len(qs)}"})
        print(json.dumps(rows[-1]), flush=True)
    if args.big:
        s, _ = sharded(client, path, args.big, args.big_shards, qs, args.k)
        rows.append({"n": args.big, "shards": args.big_shards, "sharded": s})
        print(json.dumps(rows[-1]), flush=True)
    client.close()
    cluster.close()
    print("\n".join(table(rows, args)))


if __name__ == "__main__":
    main()
