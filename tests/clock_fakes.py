"""A fake clock and an embedding model that spends time only on it, for latency tests that
must not depend on the machine's speed: the retrieval modules read the fake clock, the
model advances it by a fixed amount per text, so every figure is exact."""

from __future__ import annotations

import hashlib
import importlib

import numpy as np
import pytest

# the modules that time the online work of retrieval (their `time`)
CLOCKED = ("ablate.components.retrieval.dense.encoder", "ablate.components.retrieval.dense.path",
           "ablate.components.retrieval.dense.signal",
           "ablate.components.retrieval.lexical.path", "ablate.components.retrieval.stages",
           "ablate.components.retrieval.latency", "ablate.components.retrieval.rerank")


class FakeClock:
    """Stands in for the `time` module: perf_counter() is `now`, moved by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def perf_counter(self) -> float:
        return self.now


class ClockedModel:
    """SentenceTransformer's `encode` and dimension: a fixed unit vector per text; each
    text embedded costs `per_text` seconds on the clock."""

    def __init__(self, clock: FakeClock, per_text: float = 0.5, dim: int = 8) -> None:
        self.clock, self.per_text, self.dim = clock, per_text, dim
        self.calls = 0
        self.texts: list[str] = []

    def encode(self, texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True,
               show_progress_bar=False):
        self.calls += 1
        self.texts += list(texts)
        self.clock.now += self.per_text * len(texts)
        rows = []
        for t in texts:
            seed = int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)
            v = np.random.default_rng(seed).normal(size=self.dim)
            rows.append(v / np.linalg.norm(v))
        return np.asarray(rows, dtype=np.float32)

    def get_embedding_dimension(self) -> int:
        return self.dim


def use_clock(monkeypatch: pytest.MonkeyPatch, clock: FakeClock) -> None:
    """Make the retrieval modules read `clock` instead of the real time."""
    for name in CLOCKED:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        monkeypatch.setattr(module, "time", clock, raising=False)
