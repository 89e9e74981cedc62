"""Small shared fixtures for the retrieval tests (plain functions, no conftest)."""

from __future__ import annotations

import hashlib
import random

import numpy as np

from ablate.components.contract.records import Chunk, Question

TEXTS = [
    "The Normans were a people in Normandy, a region in France.",
    "Normandy is in the north of France; its capital is Rouen.",
    "The Vikings raided the coasts of France in the 9th century.",
    "Rouen cathedral is a famous Gothic building in Rouen.",
    "Paris is the capital and largest city of France.",
    "The Seine flows through Paris and Rouen to the English Channel.",
    "Photosynthesis converts light energy into chemical energy in plants.",
    "Chlorophyll gives plants their green colour and absorbs light.",
]


def make_chunks(texts=TEXTS, prefix="c") -> list[Chunk]:
    out = []
    for i, t in enumerate(texts):
        out.append(Chunk(chunk_id=f"{prefix}{i:03d}", doc_id=f"d{i // 2}", start=0, end=len(t),
                         text=t, n_tokens=len(t.split())))
    return out


def make_questions(qs=("What is the capital of Normandy?", "What makes plants green?",
                       "Which river flows through Paris?")) -> list[Question]:
    return [Question(qid=f"q{i}", question=q, answers=("x",), answerable=True)
            for i, q in enumerate(qs)]


def random_corpus(seed: int, n_docs: int, vocab: int = 60, max_len: int = 30):
    """Token lists with a skewed vocabulary (some terms in > half the docs: negative idf)."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocab)]
    docs = [[rng.choice(words[: rng.randint(2, vocab)]) for _ in range(rng.randint(0, max_len))]
            for _ in range(n_docs)]
    return words, docs


class FakeEncoder:
    """Deterministic stand-in for DenseEncoder: a fixed vector per text, counts calls."""

    model_id = "fake"

    def __init__(self, table: dict[str, np.ndarray] | None = None, dim: int = 4) -> None:
        self.table = table or {}
        self.dim = dim
        self.calls = 0

    def encode(self, texts):
        self.calls += 1
        rows = []
        for t in texts:
            if t in self.table:
                v = np.asarray(self.table[t], dtype=np.float32)
            else:
                rng = np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16))
                v = rng.normal(size=self.dim).astype(np.float32)
            rows.append(v / np.linalg.norm(v))
        return np.stack(rows)
