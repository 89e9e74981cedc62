"""What holds memory in an `ablate run` process: resident memory after each import and
model step, in one fresh process, in the order a sweep meets them.

Steps: Python alone; polars + numpy + scipy; the planning core (ablate.flows.run.context: data
loaders, tokenizer); prefect; MiniLM loaded by the torch backend (components/retrieval/
bert_torch.py: torch and the weights, no sentence-transformers); --texts chunk-sized texts
(about 200 word pieces each) encoded by the DenseEncoder at its default batch (16); the
encoder unloaded, as the sweep does after its stages; then what the analysis and logging
add (mlflow, matplotlib). Last, for comparison only, what importing sentence-transformers
(and with it transformers) would add. Printed: current RSS and the process's peak
(ru_maxrss) after each step, in MB, and the step's seconds.

    python benchmarks/memory.py [--texts 256]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


_last = [time.perf_counter()]


def step(name: str) -> None:
    now = time.perf_counter()
    print(f"{name:52s} rss {rss_mb():7.0f} MB   peak {peak_mb():7.0f} MB   {now - _last[0]:6.2f} s",
          flush=True)
    _last[0] = now


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--texts", type=int, default=256)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    step("python")
    import numpy  # noqa: F401
    import polars  # noqa: F401
    import scipy.sparse  # noqa: F401
    step("+ polars, numpy, scipy")
    import ablate.flows.run.context  # noqa: F401
    step("+ planning core (ablate.flows.run.context)")
    import prefect  # noqa: F401
    import prefect.flows  # noqa: F401
    step("+ prefect")
    from ablate.components.data import load_dataset
    from ablate.components.retrieval.dense.encoder import DenseEncoder
    from ablate.components.runtime.models import minilm_path
    enc = DenseEncoder(minilm_path(), None)
    enc.model  # noqa: B018 - loads it
    step(f"+ MiniLM loaded ({type(enc.model).__name__} on torch)")
    ds = load_dataset(ROOT / "experiments/data/squad2-dev-half/dev-v2.0.json", format="squad")
    words = [w for d in ds.documents for w in d.text.split()]
    texts = [" ".join(words[i * 150:(i + 1) * 150]) for i in range(args.texts)]
    step(f"+ data set and {len(texts)} texts")
    enc.encode(texts)
    step(f"+ encoded at batch {enc.batch_size}")
    enc.unload()
    step("+ encoder unloaded")
    import mlflow  # noqa: F401
    from mlflow.tracking import MlflowClient  # noqa: F401
    step("+ mlflow")
    import matplotlib.pyplot  # noqa: F401
    step("+ matplotlib")
    import sentence_transformers  # noqa: F401
    step("(comparison) + sentence-transformers, transformers")


if __name__ == "__main__":
    from ablate.components import catalogue
    catalogue.load()  # register the built-in components, as the CLI does
    main()
