"""Peak resident memory of the local generator (SmolLM2, torch backend) over one batch
of long prompts: the process's RSS sampled every 0.05 s, printed after the model load,
after each prompt is read (its KV cache kept), after the batch cache is stacked, and at
the end, with the peak. The model's weights are memory-mapped from the converted copy, so
the first prompt read brings them in (about 0.55 GB).

    .venv/bin/python benchmarks/generation_memory.py [--prompts 8] [--batch-size 8] [--repeat 90]

--repeat sets the prompt's length (a sentence of 10 words, repeated: 90 is ~940 tokens).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from demo_time import commit  # noqa: E402
from machine import describe, load_average  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def rss() -> float:
    """This process's resident memory now, GB."""
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**30


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=90)
    a = ap.parse_args()
    print(f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {describe()}, commit {commit()}, "
          f"load average {load_average()}", flush=True)
    from ablate.components import catalogue
    catalogue.load()
    from ablate.components.generation import torch_gguf, torch_greedy
    from ablate.components.runtime.memory import release_freed_memory
    from ablate.components.runtime.models import smollm2_gguf_path
    path = smollm2_gguf_path()
    torch_gguf.load(path)
    release_freed_memory()
    print(f"model loaded: {rss():.2f} GB", flush=True)
    peak = [0.0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], rss())
            time.sleep(0.05)
    threading.Thread(target=sample, daemon=True).start()
    prefill, stack = torch_greedy._prefill, torch_greedy._stack

    def read(model, prompt):  # type: ignore[no-untyped-def]
        out = prefill(model, prompt)
        print(f"  prompt of {len(prompt)} tokens read: {rss():.2f} GB", flush=True)
        return out

    def stacked(model, caches, lengths):  # type: ignore[no-untyped-def]
        out = stack(model, caches, lengths)
        print(f"  batch cache stacked: {rss():.2f} GB", flush=True)
        return out
    torch_greedy._prefill, torch_greedy._stack = read, stacked
    sentence = "The quick brown fox jumps over the lazy dog. "
    msgs = [[{"role": "user", "content": f"Context: {sentence * a.repeat} Question {i}: what jumps?"}]
            for i in range(a.prompts)]
    t0 = time.perf_counter()
    torch_gguf.chat_many(path, msgs, 32, 0.0, 0, [], 2048, a.batch_size)
    stop.set()
    print(f"{a.prompts} prompts, batches of {a.batch_size}: {time.perf_counter() - t0:.1f} s, "
          f"end {rss():.2f} GB, peak {peak[0]:.2f} GB (sampled every 0.05 s); "
          f"load average {load_average()}")


if __name__ == "__main__":
    main()
