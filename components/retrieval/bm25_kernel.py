"""The compiled BM25 query kernel (numba): scores of the touched documents and an exact
top-k with the numpy path's semantics (values rounded to `decimals`, ties by position).

Accumulation order equals `np.bincount` over the concatenated postings of the query's
terms in ascending term id (BM25Index.raw_scores), so every score is the same float.
Requires non-negative weights: untouched documents score 0 and rank after every
positive score, by position.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def search(indptr, indices, data, n_docs, terms, mult, k, decimals):  # pragma: no cover - jit
    scores = np.zeros(n_docs, dtype=np.float64)
    seen = np.zeros(n_docs, dtype=np.bool_)
    total = 0
    for j in range(terms.size):
        total += indptr[terms[j] + 1] - indptr[terms[j]]
    touched = np.empty(total, dtype=np.int64)
    m = 0
    for j in range(terms.size):
        t = terms[j]
        c = mult[j]
        for p in range(indptr[t], indptr[t + 1]):
            d = indices[p]
            if not seen[d]:
                seen[d] = True
                touched[m] = d
                m += 1
            if c != 1.0:
                scores[d] += data[p] * c
            else:
                scores[d] += data[p]
    touched = np.sort(touched[:m])  # by position: a stable sort keeps ties in that order
    rounded = np.empty(m, dtype=np.float64)
    np.round(scores[touched], decimals, rounded)
    ranked = np.zeros(n_docs, dtype=np.bool_)  # a positive rounded score
    for i in range(m):
        if rounded[i] > 0.0:
            ranked[touched[i]] = True
    positive = touched[rounded > 0.0]
    rpos = rounded[rounded > 0.0]
    if positive.size > k:  # keep the items at or above the k-th value, then sort those
        kth = np.partition(-rpos, k - 1)[k - 1]
        keep = -rpos <= kth
        positive = positive[keep]
        rpos = rpos[keep]
    order = np.argsort(-rpos, kind="mergesort")
    n_top = min(k, positive.size)
    out_pos = np.empty(k, dtype=np.int64)
    out_val = np.zeros(k, dtype=np.float64)
    for i in range(n_top):
        out_pos[i] = positive[order[i]]
        out_val[i] = rpos[order[i]]
    filled = n_top
    d = 0
    while filled < k and d < n_docs:  # zero scores, touched or not, by position
        if not ranked[d]:
            out_pos[filled] = d
            filled += 1
        d += 1
    return out_pos, out_val
