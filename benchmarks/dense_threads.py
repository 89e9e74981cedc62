"""The torch dense backend's thread choice, side by side: torch's default thread count
(every core, as before) vs the load rule (components/runtime/threads.py: the cores other
processes leave idle), on the demo's texts.

Texts: the first --texts chunks of each of the demo's three chunkings (token windows of
100, 200 and 400 tokens, overlap 32, over the bundled SQuAD 2.0 dev half), embedded by
the project's DenseEncoder (torch backend, batch 16 as the flow uses, no disk cache, one
loaded model shared). Rounds alternate the two choices; each round prints its seconds,
the thread count the rule chose and the load average (1 min) before it, then the ratio
of the best rounds. On a quiet machine the rule chooses every core, so the ratio is ~1;
on a busy one it chooses fewer. Then the vectors of the two choices are compared (max
|difference|), and the rankings of the demo's --questions questions (regression tier)
over those texts by exact search (depth 50) must be identical.

    python benchmarks/dense_threads.py [--texts 64] [--questions 500] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from ablate.components.contract.config import ChunkingConfig  # noqa: E402
from ablate.components.data import load_dataset  # noqa: E402
from ablate.components.data.tiers import select_questions  # noqa: E402
from ablate.components.retrieval.dense.encoder import DenseEncoder, DenseIndex  # noqa: E402
from ablate.components.runtime.models import minilm_path  # noqa: E402
from ablate.components.runtime.threads import idle_cores  # noqa: E402
from ablate.components.text.chunking import chunk_documents  # noqa: E402
from ablate.components.text.tokenizer import get_tokenizer  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "experiments/data/squad2-dev-half/dev-v2.0.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=64, help="chunks per chunking")
    ap.add_argument("--questions", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()

    import torch
    ds = load_dataset(DATA)
    tok = get_tokenizer()
    texts = [c.text for size in (100, 200, 400) for c in
             chunk_documents(ds.documents, ChunkingConfig(size=size, overlap=32), tok)[:args.texts]]
    questions = [q.question for q in select_questions(ds.questions, tier="regression",
                                                      split="dev", seed=13)[:args.questions]]
    runtime = DenseEncoder(minilm_path(), None).model
    runtime.encode(texts[:16], batch_size=16)  # warm-up, loaded once
    default = torch.get_num_threads()
    print(f"{len(texts)} texts (3 demo chunkings), {len(questions)} questions; "
          f"{os.cpu_count()} cores, torch default threads {default}")

    def encode(rule: bool) -> tuple[float, np.ndarray, np.ndarray]:
        enc = DenseEncoder(minilm_path(), None)
        enc._model = runtime
        if not rule:
            os.environ["ABLATE_TORCH_THREADS"] = str(default)
        try:
            t0 = time.perf_counter()
            vecs = enc.encode(texts)
            seconds = time.perf_counter() - t0
            return seconds, vecs, enc.encode(questions)
        finally:
            os.environ.pop("ABLATE_TORCH_THREADS", None)

    best: dict[bool, float] = {}
    got: dict[bool, tuple[np.ndarray, np.ndarray]] = {}
    for r in range(args.rounds):
        for rule in (False, True):
            load = os.getloadavg()[0]
            chosen = idle_cores(most=default, running=default) if rule else default
            seconds, vecs, qvecs = encode(rule)
            best[rule] = min(best.get(rule, seconds), seconds)
            got[rule] = (vecs, qvecs)
            name = "load rule" if rule else "default  "
            print(f"  round {r + 1} {name}: {seconds:7.2f} s  ({len(texts) / seconds:6.1f} "
                  f"texts/s, {chosen} threads, load {load:.2f})", flush=True)
    print(f"ratio default / load rule (best rounds): {best[False] / best[True]:.2f}x "
          f"(load now {', '.join(f'{x:.2f}' for x in os.getloadavg())})")
    (a, qa), (b, qb) = got[False], got[True]
    print(f"max |vector difference|: {max(float(np.abs(a - b).max()), float(np.abs(qa - qb).max())):.2e}")
    ids = [f"c{i:05d}" for i in range(len(texts))]
    ra = DenseIndex(ids, a).search(qa, 50)
    rb = DenseIndex(ids, b).search(qb, 50)
    same = sum([c for c, _ in x] == [c for c, _ in y] for x, y in zip(ra, rb))
    print(f"identical top-50 rankings: {same}/{len(ra)}")


if __name__ == "__main__":
    from ablate.components import catalogue
    catalogue.load()
    main()
