"""The dense index types side by side: flat (exact) against flat16 and FAISS HNSW and IVF.

Random L2-normalised 384-d float32 vectors (fixed seed, generated a block at a time) at
each size, 200 random queries, the indexes built as the dense path builds them
(ablate.components.retrieval.dense.ann.DENSE_INDEXES with the default `retrieval.ann`
parameters: one-thread builds, seeded k-means). Per size and index, in a fresh Python
process: build seconds, search seconds for the queries (top k), recall@k against flat's
top k, and peak resident memory of the process (Linux VmHWM, over generating the data,
building and searching; `data` is the resident size after generating the vectors, `held`
what the process keeps once the index is built and the input vectors are freed).
flat16 is measured alone (without the float32 index the sweep keeps beside it for recall).

Random vectors in 384 dimensions have no cluster or neighbourhood structure: they are the
hardest case for an approximate index (real embeddings give higher recall at the same
parameters), and the timing of a one-thread build is what determinism costs.

    python benchmarks/ann.py [--sizes 100000 1000000] [--queries 200] [--k 10] [--hnsw-max N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scaling import _mem  # noqa: E402  ((current, peak) resident MiB of this process)

DIM, BLOCK = 384, 65536
INDEXES = ("flat", "flat16", "hnsw", "ivf")


def unit_rows(n: int, seed: int) -> np.ndarray:
    """n random L2-normalised float32 rows, generated a block at a time."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, DIM), dtype=np.float32)
    for a in range(0, n, BLOCK):
        x = rng.standard_normal((min(BLOCK, n - a), DIM), dtype=np.float32)
        out[a:a + x.shape[0]] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def inner(n: int, kind: str, n_queries: int, k: int, exact_file: Path) -> dict:
    from ablate.components import catalogue
    from ablate.components.contract.config import AnnConfig
    from ablate.components.retrieval.dense.ann import DENSE_INDEXES, HalfIndex, ivf_cells
    catalogue.load()
    base_mib, _ = _mem()
    vectors = unit_rows(n, seed=0)
    queries = unit_rows(n_queries, seed=1)
    ids = [f"c{i:07d}" for i in range(n)]
    data_mib, _ = _mem()
    t0 = time.perf_counter()
    index = (HalfIndex(ids, vectors, exact=False) if kind == "flat16"  # alone: its own memory
             else DENSE_INDEXES.get(kind)(ids, vectors, AnnConfig()))
    build = time.perf_counter() - t0
    del vectors  # the index holds what it needs
    held_mib = _mem()[0] - base_mib  # what the index keeps (ids included)
    t0 = time.perf_counter()
    found = index.search(queries, k)
    search = time.perf_counter() - t0
    top = [[c for c, _ in r] for r in found]
    if kind == "flat":
        exact_file.write_text(json.dumps(top))
        recall = 1.0
    else:
        exact = json.loads(exact_file.read_text())
        recall = float(np.mean([len(set(a) & set(b)) / len(b) for a, b in zip(top, exact)]))
    _, peak = _mem()
    extra = {"ivf": f"nlist {ivf_cells(n, AnnConfig().ivf_nlist)}"}.get(kind, "")
    return {"n": n, "index": kind, "build_s": build, "search_s": search, "recall": recall,
            "data_mib": data_mib, "held_mib": held_mib, "peak_mib": peak, "note": extra}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--hnsw-max", type=int, default=None,
                    help="build HNSW only up to this many chunks (its build runs on one thread)")
    ap.add_argument("--inner", nargs=2, metavar=("N", "INDEX"))
    ap.add_argument("--exact-file", type=Path)
    args = ap.parse_args()
    if args.inner:
        print(json.dumps(inner(int(args.inner[0]), args.inner[1], args.queries, args.k,
                               args.exact_file)))
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            exact = Path(tmp) / f"exact-{n}.json"
            for kind in INDEXES:  # flat first: the others' recall is against its top k
                if kind == "hnsw" and args.hnsw_max is not None and n > args.hnsw_max:
                    continue
                out = subprocess.run([sys.executable, __file__, "--inner", str(n), kind,
                                      "--queries", str(args.queries), "--k", str(args.k),
                                      "--exact-file", str(exact)],
                                     check=True, capture_output=True, text=True)
                rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
                r = rows[-1]
                print(f"  {n:>9,} {kind:5s} build {r['build_s']:8.2f} s  "
                      f"search {r['search_s']:7.3f} s  peak {r['peak_mib']:7.0f} MiB",
                      file=sys.stderr, flush=True)
    print(f"\nDense indexes, random unit 384-d float32, {args.queries} queries, "
          f"top {args.k}, default retrieval.ann\n")
    print(f"| {'chunks':>9} | index | {'build s':>8} | {'search s':>8} | "
          f"recall@{args.k} | {'data MiB':>8} | {'held MiB':>8} | {'peak MiB':>8} | note")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(f"| {r['n']:>9,} | {r['index']:5s} | {r['build_s']:8.2f} | {r['search_s']:8.3f} | "
              f"{r['recall']:9.3f} | {r['data_mib']:8.0f} | {r['held_mib']:8.0f} | "
              f"{r['peak_mib']:8.0f} | {r['note']}")


if __name__ == "__main__":
    main()
