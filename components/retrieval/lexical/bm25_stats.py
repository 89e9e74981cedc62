"""What BM25 needs from a document collection, read in bounded memory.

`term_ids` turns analysed documents (read once, in order) into one integer array of term
ids, TOKEN_BLOCK ids at a time, so a million-chunk corpus never holds its tokens as
Python strings at once. `CollectionStats` are the statistics a BM25 score depends on
beyond one document (document count, total length, document frequency of every term):
merged over the shards of a corpus, they let each shard's index score exactly as one
index of the whole corpus would (components/retrieval/shards.py).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np

from ablate.components.retrieval.lexical import bm25_variants
from ablate.components.retrieval.lexical.bm25_variants import okapi_idf

__all__ = ["CollectionStats", "okapi_idf", "term_ids"]

TOKEN_BLOCK = 1 << 20  # term ids held in a Python list before they move to numpy


def term_ids(docs: Iterable[Sequence[str]], n_hint: int = 0) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(term id of every token in reading order, length of every document, the terms by
    id: numbered by first occurrence)."""
    vocab: dict[str, int] = {}
    setdef = vocab.setdefault
    parts: list[np.ndarray] = []
    pending: list[int] = []
    lens: list[int] = []
    for toks in docs:
        lens.append(len(toks))
        pending.extend(setdef(t, len(vocab)) for t in toks)
        if len(pending) >= TOKEN_BLOCK:
            parts.append(np.asarray(pending, dtype=np.int64))
            pending = []
    parts.append(np.asarray(pending, dtype=np.int64))
    terms = np.concatenate(parts) if len(parts) > 1 else parts[0]
    return terms, np.asarray(lens, dtype=np.int64), list(vocab)


@dataclass(frozen=True)
class CollectionStats:
    """Document count, total length (tokens) and document frequency of every term."""

    n_docs: int
    total_len: int
    df: dict[str, int]

    @classmethod
    def of(cls, docs: Iterable[Sequence[str]]) -> CollectionStats:
        df: Counter[str] = Counter()
        n = total = 0
        for toks in docs:
            n += 1
            total += len(toks)
            df.update(set(toks))
        return cls(n, total, dict(df))

    @classmethod
    def merge(cls, parts: Sequence[CollectionStats]) -> CollectionStats:
        df: Counter[str] = Counter()
        for p in parts:
            df.update(p.df)
        return cls(sum(p.n_docs for p in parts), sum(p.total_len for p in parts), dict(df))

    def avgdl(self, variant: str = "okapi") -> float:
        """Mean document length (1.0 for an empty or all-empty collection, as BM25Index)."""
        return bm25_variants.avgdl(variant, self.total_len, self.n_docs)

    def idf(self, vocab: Mapping[str, int], epsilon: float, variant: str = "okapi") -> np.ndarray:
        """The idf of the terms of `vocab` (term -> row) under `variant`, computed over
        the collection (okapi's epsilon floor over the whole collection's vocabulary)."""
        names = list(self.df)
        all_idf = bm25_variants.idf(variant, np.asarray([self.df[t] for t in names],
                                                        dtype=np.float64), self.n_docs, epsilon)
        at = {t: i for i, t in enumerate(names)}
        out = np.zeros(len(vocab), dtype=np.float64)
        for t, row in vocab.items():
            if t not in at:
                raise ValueError(f"term {t!r} is not in the collection's statistics")
            out[row] = all_idf[at[t]]
        return out
