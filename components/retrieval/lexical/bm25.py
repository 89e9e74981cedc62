"""Okapi BM25 over a scipy.sparse term x document weight matrix, with rank-bm25 semantics.

Reference semantics are rank-bm25's `BM25Okapi(k1, b, epsilon)`:
idf(t) = ln(N - df + 0.5) - ln(df + 0.5), and terms with a negative idf get the floor
epsilon * mean(idf over the vocabulary). The per-(term, document) weight
idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)) is precomputed once, so a
query's scores are a sum of a few rows: no Python loop over documents. Terms in more
than DENSE_SHARE of the documents also keep a dense row (adding a row beats scattering a
long posting list; each costs 8 bytes per document). A query term repeated n times counts
n times, as in rank-bm25; unknown terms score 0.

Scores are rounded to 9 decimals (see SCORE_DECIMALS) so ties are exact.
Documents are held in chunk-id order, so "ties broken by chunk id ascending" is just
"ties broken by position", which keeps top-K selection cheap and exact.

`search_many` answers a list of queries at once: with numba installed, in one compiled
call (bm25_numba); otherwise in numpy blocks of queries (one score matrix per block,
topk_rows on it). Both sum each document's weights in the same order (dense-row terms,
then posting terms, each in term order), so `search`, `search_many` and `scores` agree
exactly whichever path runs.
"""

from __future__ import annotations

from itertools import chain, repeat
from typing import Iterable, Sequence

import numpy as np

from ablate.components.contract.records import Ranking
from ablate.components.retrieval.lexical import bm25_numba, bm25_variants
from ablate.components.retrieval.lexical.bm25_stats import CollectionStats, term_ids
from ablate.components.retrieval.topk import topk_rows

__all__ = ["BM25Index", "CollectionStats"]

# Scores are rounded to 1e-9: sums that are equal in exact arithmetic (e.g. overlapping
# chunks with the same term counts) can differ in the last bits depending on summation
# order; rounding makes them true ties, broken by id, whatever the implementation.
SCORE_DECIMALS = 9
DENSE_SHARE = 0.1  # terms in more than this share of the documents get a dense row


class BM25Index:
    """An immutable BM25 index of tokenised documents identified by unique string ids."""

    # numpy path: queries per block = BLOCK_BYTES / (8 * n_docs), at least 1. A block that
    # stays in the CPU's cache was fastest on benchmarks/bm25.py's corpus (2 MiB: ~10k
    # queries/s; 32 MiB: 6-9k)
    BLOCK_BYTES = 2 << 20

    def __init__(self, ids: Sequence[str], docs: Iterable[Sequence[str]],
                 k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25,
                 collection: CollectionStats | None = None, variant: str = "okapi",
                 delta: float | None = None) -> None:
        """`docs`: the analysed documents in the order of `ids`, read once (an iterator
        such as `map(analyzer, texts)` keeps only TOKEN_BLOCK term ids per block in Python
        objects). `collection`: the statistics of a larger collection these documents are
        a part of (a shard's): idf and avgdl then come from it, so each document scores
        what it would in one index of the whole collection. `variant`: the BM25 formula
        (bm25_variants: okapi, lucene, bm25plus, bm25l); `delta` that of bm25plus/bm25l
        (None: the variant's default)."""
        self._build(ids, *term_ids(docs, len(ids)), k1, b, epsilon, collection, variant, delta)

    @classmethod
    def of_term_ids(cls, ids: Sequence[str], terms: np.ndarray, lens: np.ndarray,
                    words: Sequence[str], k1: float = 1.5, b: float = 0.75,
                    epsilon: float = 0.25, collection: CollectionStats | None = None,
                    variant: str = "okapi", delta: float | None = None) -> BM25Index:
        """The index of documents already analysed into term ids (bm25_stats.term_ids'
        output: every token's term id in reading order, each document's length, the
        terms by id), without turning them back into words."""
        index = cls.__new__(cls)
        index._build(ids, terms, lens, words, k1, b, epsilon, collection, variant, delta)
        return index

    def _build(self, ids: Sequence[str], terms: np.ndarray, doc_len_in: np.ndarray,
               words: Sequence[str], k1: float, b: float, epsilon: float,
               collection: CollectionStats | None, variant: str = "okapi",
               delta: float | None = None) -> None:
        if len(set(ids)) != len(ids):
            raise ValueError("document ids repeat")
        self.k1, self.b, self.epsilon = float(k1), float(b), float(epsilon)
        self.variant = bm25_variants.check(variant)
        self.delta = bm25_variants.delta_of(variant, delta)
        if doc_len_in.size != len(ids):
            raise ValueError(f"{len(ids)} ids for {doc_len_in.size} documents")
        order = sorted(range(len(ids)), key=ids.__getitem__)
        self.ids: list[str] = [ids[i] for i in order]
        n = len(self.ids)
        order_arr = np.asarray(order, dtype=np.int64)
        doc_len = doc_len_in[order_arr].astype(np.float64)
        # the term ids in sorted-document order, gathered without a sort
        start_in = np.cumsum(doc_len_in) - doc_len_in
        lens = doc_len_in[order_arr]
        gather = (np.repeat(start_in[order_arr] - (np.cumsum(lens) - lens), lens)
                  + np.arange(int(lens.sum()), dtype=np.int64))
        terms = terms[gather]
        del gather
        # term ids numbered by first occurrence in sorted-document order (rows in that
        # order keep every sum in the same order whatever order the documents came in)
        _, first = np.unique(terms, return_index=True)
        renumber = np.empty(len(words), dtype=np.int64)
        renumber[np.argsort(first, kind="stable")] = np.arange(len(words))
        terms = renumber[terms]
        self.vocab: dict[str, int] = {w: int(renumber[i]) for i, w in enumerate(words)}
        del words, renumber, first
        n_terms = len(self.vocab)
        self.doc_len = doc_len
        self.n_docs = n
        doc_of = np.repeat(np.arange(n, dtype=np.int64), lens)
        key = terms * max(n, 1) + doc_of
        del terms, doc_of
        uniq, tf = np.unique(key, return_counts=True)
        del key
        term = uniq // max(n, 1)
        doc = uniq % max(n, 1)
        del uniq
        df = np.bincount(term, minlength=n_terms).astype(np.float64)
        if collection is None:
            self.avgdl = bm25_variants.avgdl(self.variant, float(doc_len.sum()), n)
            self.idf = bm25_variants.idf(self.variant, df, n, self.epsilon)
        else:
            self.avgdl = collection.avgdl(self.variant)
            self.idf = collection.idf(self.vocab, self.epsilon, self.variant)
        weight = bm25_variants.weights(self.variant, self.idf[term], tf, doc_len[doc],
                                       self.avgdl, self.k1, self.b, self.delta)
        del tf
        # (term x doc) CSR: row t holds the documents containing t and their weights; the
        # pairs are sorted by (term, doc) already, so the arrays are built directly
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(np.bincount(term, minlength=n_terms), out=indptr[1:])
        from scipy import sparse  # here: a run whose stages are all cached builds no index
        self.matrix = sparse.csr_matrix((weight, doc, indptr), shape=(n_terms, n))
        del term
        frequent = np.flatnonzero(df > DENSE_SHARE * n)
        self._dense = self.matrix[frequent].toarray()
        self._dense_rows = list(self._dense)
        self._dense_slot = np.full(n_terms, -1, dtype=np.int64)
        self._dense_slot[frequent] = np.arange(frequent.size)
        self._ids = np.array(self.ids, dtype=object)

    def _pairs(self, queries: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(query, term, count) of every distinct known term of each query, sorted by
        (query, term); a term repeated n times in a query counts n."""
        get, nt = self.vocab.get, max(len(self.vocab), 1)
        lens = np.fromiter(map(len, queries), dtype=np.int64, count=len(queries))
        tids = np.fromiter(map(get, chain.from_iterable(queries), repeat(-1)),
                           dtype=np.int64, count=int(lens.sum()))
        qi = np.repeat(np.arange(len(queries), dtype=np.int64), lens)
        key, count = np.unique(qi[tids >= 0] * nt + tids[tids >= 0], return_counts=True)
        return key // nt, key % nt, count

    def _score_block(self, qi: np.ndarray, term: np.ndarray, count: np.ndarray,
                     out: np.ndarray) -> np.ndarray:
        """Unrounded scores of the queries whose pairs are given (qi from 0), written to
        `out` (queries x n_docs). Per document: its dense-row terms, then its posting terms,
        each in term order, so a query's scores do not depend on the other queries."""
        slot = self._dense_slot[term]
        dense = slot >= 0
        # term-major, so each dense row is read once per block; each query still adds its
        # terms in term order
        order = np.lexsort((qi[dense], slot[dense]))
        rows, dense_rows, seen = list(out), self._dense_rows, [False] * out.shape[0]
        for r, j, c in zip(qi[dense][order].tolist(), slot[dense][order].tolist(),
                           count[dense][order].tolist()):
            src = dense_rows[j] if c == 1 else dense_rows[j] * c
            if seen[r]:
                np.add(rows[r], src, out=rows[r])
            else:
                np.copyto(rows[r], src)
                seen[r] = True
        for r in (r for r, x in enumerate(seen) if not x):
            rows[r].fill(0.0)
        qi, term, count = qi[~dense], term[~dense], count[~dense]
        m = self.matrix
        lo = m.indptr[term]
        lens = m.indptr[term + 1] - lo
        total = int(lens.sum())
        if total:
            at = np.arange(total, dtype=np.int64) + np.repeat(lo - (np.cumsum(lens) - lens), lens)
            w = m.data[at]
            if (count != 1).any():
                w = w * np.repeat(count, lens)
            np.add.at(out.reshape(-1), m.indices[at] + np.repeat(qi * self.n_docs, lens), w)
        return out

    def raw_scores(self, query: Sequence[str]) -> np.ndarray:
        """Unrounded BM25 score of every document (in `self.ids` order)."""
        return self._score_block(*self._pairs([query]), np.empty((1, self.n_docs)))[0]

    def scores(self, query: Sequence[str]) -> np.ndarray:
        """BM25 score of every document (in `self.ids` order), rounded to SCORE_DECIMALS
        (lucene: to float32, as Lucene casts its double sum of the terms' float scores)."""
        raw = self.raw_scores(query)
        if self.variant == "lucene":
            return raw.astype(np.float32).astype(np.float64)
        return np.round(raw, SCORE_DECIMALS)

    def search(self, query: Sequence[str], k: int) -> Ranking:
        """Top-k (id, score), best first, ties by id; exactly min(k, n_docs) entries."""
        return self.search_many([query], k)[0]

    def search_many(self, queries: Sequence[Sequence[str]], k: int) -> list[Ranking]:
        """`search` of each query (the same rankings), scored a block of queries at a time."""
        if not self.n_docs or k <= 0:
            return [[] for _ in queries]
        # lucene: each document's score is its unrounded double sum of the terms' float32
        # weights cast to float32 (as Lucene sums its clauses' float scores in a double and
        # returns a float); the others: rounded to SCORE_DECIMALS. Ties by id, in the numba
        # kernel for large batches, else in numpy blocks of queries.
        f32 = self.variant == "lucene"
        decimals = None if f32 else SCORE_DECIMALS
        qi, term, count = self._pairs(queries)
        ids = self._ids
        if bm25_numba.worth(len(queries), self.n_docs):
            m = self.matrix
            qptr = np.searchsorted(qi, np.arange(len(queries) + 1))
            pos_all, vals = bm25_numba.search(qptr, term, count, self._dense_slot, self._dense,
                                              m.indptr, m.indices, m.data, self.n_docs, k,
                                              decimals, f32=f32)
            return [list(zip(ids[p].tolist(), v.tolist())) for p, v in zip(pos_all, vals)]
        out: list[Ranking] = []
        block = max(1, self.BLOCK_BYTES // (8 * self.n_docs))
        buf = np.empty((min(block, len(queries)), self.n_docs), dtype=np.float64)
        for a in range(0, len(queries), block):
            b = min(a + block, len(queries))
            lo, hi = np.searchsorted(qi, [a, b])
            scores = self._score_block(qi[lo:hi] - a, term[lo:hi], count[lo:hi], buf[:b - a])
            pos, vals = topk_rows(scores, k, decimals, f32=f32)
            out.extend(list(zip(ids[p].tolist(), v.tolist())) for p, v in zip(pos, vals))
        return out

    def prepare(self, n_queries: int) -> None:
        """Load the numba kernel now if search_many will use it for `n_queries` queries
        (so a timed batch does not pay its compile or cache load)."""
        if bm25_numba.worth(n_queries, self.n_docs):
            bm25_numba.load()

    def scores_for(self, query: Sequence[str], ids: Sequence[str]) -> np.ndarray:
        """Scores of the given documents only (for the `lexical` rerank signal)."""
        pos = self.positions(ids)
        return self.scores(query)[pos]

    def positions(self, ids: Sequence[str]) -> np.ndarray:
        if not hasattr(self, "_pos"):
            self._pos = {d: i for i, d in enumerate(self.ids)}
        return np.fromiter((self._pos[d] for d in ids), dtype=np.int64, count=len(ids))

