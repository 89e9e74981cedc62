"""The cost of checking an on-disk BM25 index's checksums when it is loaded (issue 39.1).

Builds the arrays of a BM25 index of --chunks documents directly (each document holds
--terms distinct terms drawn from a Zipf law over --vocab terms; weights are random: the
bytes on disk, not the scores, are what is measured), saves it with bm25_disk.save, then
times side by side, best of --repeats:
- unchecked: the arrays memory-mapped without reading them (what load did before 39.1),
- checked, first load in a process: every file's sha256 computed (pages read from the
  page cache: the folder was just written, as on a warm machine),
- checked, again in the same process: the checksums remembered per (file, size, mtime),
and one query of --query-terms terms on the loaded index, for scale. Prints the folder's
size, the times, the ratio checked / unchecked, and whether the loaded arrays are still
memory-mapped (np.memmap) and the process's resident memory grew by less than the
folder's size (the check reads in 4 MB blocks; nothing is copied into the process).

    python benchmarks/bm25_disk.py [--chunks 1000000] [--terms 35] [--vocab 200000]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy import sparse

from ablate.components.retrieval import array_folder
from ablate.components.retrieval.lexical import bm25_disk
from ablate.components.retrieval.lexical.bm25 import DENSE_SHARE, BM25Index


def synthetic(n_docs: int, terms: int, vocab: int, seed: int = 0) -> BM25Index:
    rng = np.random.default_rng(seed)
    term = (rng.zipf(1.3, size=n_docs * terms) - 1) % vocab
    doc = np.repeat(np.arange(n_docs, dtype=np.int64), terms)
    key = np.unique(term.astype(np.int64) * n_docs + doc)
    del term, doc
    t, d = key // n_docs, key % n_docs
    del key
    indptr = np.zeros(vocab + 1, dtype=np.int64)
    np.cumsum(np.bincount(t, minlength=vocab), out=indptr[1:])
    weight = rng.random(t.size)
    index = BM25Index.__new__(BM25Index)
    index.k1, index.b, index.epsilon = 1.5, 0.75, 0.25
    index.variant, index.delta = "okapi", 0.0
    index.ids = [f"c{i:08d}" for i in range(n_docs)]
    index.vocab = {f"t{i}": i for i in range(vocab)}
    index.n_docs, index.avgdl = n_docs, float(terms)
    index.doc_len = np.full(n_docs, terms, dtype=np.float64)
    index.idf = rng.random(vocab)
    index.matrix = sparse.csr_matrix((weight, d, indptr), shape=(vocab, n_docs))
    df = np.diff(indptr)
    frequent = np.flatnonzero(df > DENSE_SHARE * n_docs)
    index._dense = index.matrix[frequent].toarray()
    index._dense_slot = np.full(vocab, -1, dtype=np.int64)
    index._dense_slot[frequent] = np.arange(frequent.size)
    return index


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def mapped(a) -> bool:
    while a is not None:
        if isinstance(a, np.memmap):
            return True
        a = getattr(a, "base", None)
    return False


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", type=int, default=1_000_000)
    ap.add_argument("--terms", type=int, default=35)
    ap.add_argument("--vocab", type=int, default=200_000)
    ap.add_argument("--query-terms", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bm25-disk-bench-"))
    try:
        t0 = time.perf_counter()
        index = synthetic(args.chunks, args.terms, args.vocab)
        built = time.perf_counter() - t0
        t0 = time.perf_counter()
        bm25_disk.save(index, work / "ix")
        saved = time.perf_counter() - t0
        del index
        size = sum(f.stat().st_size for f in (work / "ix").iterdir()) / 2**20
        print(f"{args.chunks} chunks x {args.terms} terms, vocabulary {args.vocab}: folder "
              f"{size:.0f} MB (arrays built in {built:.1f} s, saved with checksums in {saved:.1f} s)")
        real_intact = array_folder.intact
        unchecked, first, again = [], [], []
        for _ in range(args.repeats):
            array_folder.intact = lambda folder, files, fmt: True  # type: ignore[assignment]
            t0 = time.perf_counter()
            bm25_disk.load(work / "ix")
            unchecked.append(time.perf_counter() - t0)
            array_folder.intact = real_intact  # type: ignore[assignment]
            array_folder._VERIFIED.clear()
            before = rss_mb()
            t0 = time.perf_counter()
            loaded = bm25_disk.load(work / "ix")
            first.append(time.perf_counter() - t0)
            grew = rss_mb() - before
            t0 = time.perf_counter()
            bm25_disk.load(work / "ix")
            again.append(time.perf_counter() - t0)
        assert loaded is not None
        query = [f"t{i}" for i in range(1, 1 + args.query_terms)]
        t0 = time.perf_counter()
        loaded.search(query, 10)
        searched = time.perf_counter() - t0
        u, f, a = min(unchecked), min(first), min(again)
        print(f"load unchecked (before 39.1):      {u:8.3f} s   (range {min(unchecked):.3f}-{max(unchecked):.3f})")
        print(f"load checked, first in a process:  {f:8.3f} s   (range {min(first):.3f}-{max(first):.3f})"
              f"   {size / f:.0f} MB/s")
        print(f"load checked, again (remembered):  {a:8.3f} s   (range {min(again):.3f}-{max(again):.3f})")
        print(f"one {args.query_terms}-term query on the loaded index: {searched:.3f} s")
        print(f"ratio checked first / unchecked: {f / u:.1f}x;  again / unchecked: {a / u:.2f}x")
        arrays = (loaded.matrix.data, loaded.matrix.indices, loaded._dense)
        print(f"arrays memory-mapped after a checked load: {all(mapped(x) for x in arrays)}; "
              f"resident memory grew by {grew:.0f} MB during the checked load "
              f"(folder {size:.0f} MB)")
        print(f"peak resident memory of this process: "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
