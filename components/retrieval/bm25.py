"""Okapi BM25 over a scipy.sparse term x document weight matrix, with rank-bm25 semantics.

Reference semantics are rank-bm25's `BM25Okapi(k1, b, epsilon)`:
idf(t) = ln(N - df + 0.5) - ln(df + 0.5), and terms with a negative idf get the floor
epsilon * mean(idf over the vocabulary). The per-(term, document) weight
idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)) is precomputed once, so a
query's scores are a sum of a few sparse rows (np.bincount over their slices): no
Python loop over documents. A query term repeated n times counts n times, as in
rank-bm25; unknown terms score 0.

Scores are rounded to 9 decimals (see SCORE_DECIMALS) so ties are exact.
Documents are held in chunk-id order, so "ties broken by chunk id ascending" is just
"ties broken by position", which keeps top-K selection cheap and exact.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np

from components.records import Ranking
from scipy import sparse

from components.retrieval.topk import topk_by_position


# Scores are rounded to 1e-9: sums that are equal in exact arithmetic (e.g. overlapping
# chunks with the same term counts) can differ in the last bits depending on summation
# order; rounding makes them true ties, broken by id, whatever the implementation.
SCORE_DECIMALS = 9


class BM25Index:
    """An immutable BM25 index of tokenised documents identified by unique string ids."""

    def __init__(self, ids: Sequence[str], docs: Sequence[Sequence[str]],
                 k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> None:
        if len(ids) != len(docs):
            raise ValueError(f"{len(ids)} ids for {len(docs)} documents")
        if len(set(ids)) != len(ids):
            raise ValueError("document ids repeat")
        order = sorted(range(len(ids)), key=lambda i: ids[i])
        self.ids: list[str] = [ids[i] for i in order]
        self.k1, self.b, self.epsilon = float(k1), float(b), float(epsilon)
        self.vocab: dict[str, int] = {}
        n = len(self.ids)
        term_ids: list[int] = []
        doc_len = np.zeros(n, dtype=np.float64)
        for pos, i in enumerate(order):
            toks = docs[i]
            doc_len[pos] = len(toks)
            setdef = self.vocab.setdefault
            term_ids.extend(setdef(t, len(self.vocab)) for t in toks)
        n_terms = len(self.vocab)
        self.doc_len = doc_len
        self.avgdl = float(doc_len.mean()) if n and doc_len.sum() > 0 else 1.0
        self.n_docs = n
        # unique (term, doc) pairs with their term frequency
        doc_of = np.repeat(np.arange(n, dtype=np.int64), doc_len.astype(np.int64))
        key = np.asarray(term_ids, dtype=np.int64) * max(n, 1) + doc_of
        uniq, tf = np.unique(key, return_counts=True)
        term = uniq // max(n, 1)
        doc = uniq % max(n, 1)
        df = np.bincount(term, minlength=n_terms).astype(np.float64)
        self.idf = self._idf(df, n, self.epsilon)
        tf = tf.astype(np.float64)
        norm = self.k1 * (1.0 - self.b + self.b * doc_len[doc] / self.avgdl)
        weight = self.idf[term] * tf * (self.k1 + 1.0) / (tf + norm)
        # (term x doc) CSR: row t holds the documents containing t and their weights
        self.matrix = sparse.csr_matrix((weight, (term, doc)), shape=(n_terms, n))
        self.matrix.sort_indices()

    @staticmethod
    def _idf(df: np.ndarray, n: int, epsilon: float) -> np.ndarray:
        """rank-bm25's BM25Okapi idf, including the epsilon * average-idf floor."""
        if df.size == 0:
            return df
        idf = np.log(n - df + 0.5) - np.log(df + 0.5)
        eps = epsilon * float(idf.sum() / idf.size)
        return np.where(idf < 0, eps, idf)

    def _term_counts(self, query: Sequence[str]) -> list[tuple[int, int]]:
        counts = Counter(self.vocab[t] for t in query if t in self.vocab)
        return sorted(counts.items())

    def raw_scores(self, query: Sequence[str]) -> np.ndarray:
        """Unrounded BM25 score of every document (in `self.ids` order)."""
        m = self.matrix
        idx_parts, w_parts = [], []
        for t, c in self._term_counts(query):
            lo, hi = m.indptr[t], m.indptr[t + 1]
            idx_parts.append(m.indices[lo:hi])
            w_parts.append(m.data[lo:hi] * c if c != 1 else m.data[lo:hi])
        if not idx_parts:
            return np.zeros(self.n_docs, dtype=np.float64)
        return np.bincount(np.concatenate(idx_parts), weights=np.concatenate(w_parts),
                           minlength=self.n_docs)

    def scores(self, query: Sequence[str]) -> np.ndarray:
        """BM25 score of every document (in `self.ids` order), rounded to SCORE_DECIMALS."""
        return np.round(self.raw_scores(query), SCORE_DECIMALS)

    def search(self, query: Sequence[str], k: int) -> Ranking:
        """Top-k (id, score), best first, ties by id; exactly min(k, n_docs) entries."""
        pos, vals = topk_by_position(self.raw_scores(query), k, decimals=SCORE_DECIMALS)
        ids = self.ids
        return [(ids[p], float(v)) for p, v in zip(pos, vals)]

    def scores_for(self, query: Sequence[str], ids: Sequence[str]) -> np.ndarray:
        """Scores of the given documents only (for the `lexical` rerank signal)."""
        pos = self.positions(ids)
        return self.scores(query)[pos]

    def positions(self, ids: Sequence[str]) -> np.ndarray:
        if not hasattr(self, "_pos"):
            self._pos = {d: i for i, d in enumerate(self.ids)}
        return np.fromiter((self._pos[d] for d in ids), dtype=np.int64, count=len(ids))
