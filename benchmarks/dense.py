"""Dense encoding throughput: the project's DenseEncoder vs SentenceTransformer.encode.

MiniLM on torch on both sides: the reference is sentence-transformers' own `encode`; the
project's DenseEncoder runs its torch backend (for this BERT folder, the forward of
components/retrieval/dense/bert_torch.py, without sentence-transformers), loaded once. Same
texts (word-window chunks of the bundled SQuAD 2.0 dev-half paragraphs), same batch
size, normalised embeddings; the embeddings must be bitwise equal. The project side starts
from an empty on-disk cache each round, so it pays hashing, cache look-up and the
atomic shard write; rounds alternate (native, project, native, ...) and the best of
each side is kept, to damp noise from other load on the machine. Prints texts/second,
the ratio project / native (target >= 0.9), and the warm-cache rate (second run).

    python benchmarks/dense.py [--texts 400] [--rounds 3] [--batch-size 64]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bm25 import load as load_windows  # noqa: E402  (benchmarks/bm25.py: same corpus)

from ablate.components.retrieval.dense.encoder import DenseEncoder  # noqa: E402
from ablate.components.runtime.models import minilm_path  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=64)
    args = ap.parse_args()

    import torch
    texts, _ = load_windows(args.texts)
    from sentence_transformers import SentenceTransformer
    model = SentenceTransformer(str(minilm_path()), device="cpu", local_files_only=True)
    ours = DenseEncoder(minilm_path(), None).model
    ours.encode(texts[:64], batch_size=args.batch_size)  # warm-up
    print(f"{len(texts)} texts (40-word windows), batch {args.batch_size}, "
          f"torch threads {torch.get_num_threads()}")
    model.encode(texts[:64], batch_size=args.batch_size)  # warm-up

    native_t, project_t, warm_t = [], [], []
    ref = None
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        ref = model.encode(texts, batch_size=args.batch_size, normalize_embeddings=True,
                           convert_to_numpy=True, show_progress_bar=False)
        native_t.append(time.perf_counter() - t0)

        cache = Path(tempfile.mkdtemp(prefix="ablate-dense-bench-"))
        try:
            enc = DenseEncoder(minilm_path(), cache, batch_size=args.batch_size)
            enc._model = ours  # loaded once: measure encoding, not loading
            t0 = time.perf_counter()
            got = enc.encode(texts)
            project_t.append(time.perf_counter() - t0)
            assert enc.counters["embedded"] == len(set(texts))
            again = DenseEncoder(minilm_path(), cache, batch_size=args.batch_size)
            t0 = time.perf_counter()
            again.encode(texts)
            warm_t.append(time.perf_counter() - t0)
            assert again.counters["embedded"] == 0
        finally:
            shutil.rmtree(cache, ignore_errors=True)

    n = len(texts)
    native, project, warm = n / min(native_t), n / min(project_t), n / min(warm_t)
    print(f"  model.encode        {native:10.1f} texts/s")
    print(f"  DenseEncoder (cold) {project:10.1f} texts/s")
    print(f"  DenseEncoder (warm) {warm:10.1f} texts/s  (second run: nothing embedded)")
    print(f"ratio project / model.encode: {project / native:.3f}  (target >= 0.9)")
    print(f"max |embedding diff| vs model.encode: {float(np.abs(got - ref).max()):.2e}")


if __name__ == "__main__":
    from ablate.components import catalogue
    catalogue.load()  # register the built-in components, as the CLI does
    main()
