"""Exact top-K selection with deterministic ties (lower position first).

Retrieval indexes keep their items in id order, so breaking ties by position is
breaking ties by id. argpartition alone is not enough: it splits ties at the K-th
value arbitrarily, so the items equal to the K-th value are chosen by position here.
"""

from __future__ import annotations

import numpy as np


def topk_by_position(scores: np.ndarray, k: int,
                     decimals: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(positions, values) of the k best scores, best first, equal values by position.

    With `decimals`, values are rounded first (ties that are exact in real arithmetic
    become exact here); only the items near the K-th value are rounded, which gives the
    same result as rounding everything, since rounding is monotone.
    """
    n = scores.shape[0]
    k = min(int(k), n)
    if k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=scores.dtype)
    if k < n:
        kth = np.partition(scores, n - k)[n - k]  # the k-th largest raw value
        if decimals is None:
            above = np.flatnonzero(scores > kth)
            ties = np.flatnonzero(scores == kth)[: k - above.size]
        else:
            near = np.flatnonzero(scores >= kth - 10.0 ** -decimals)
            r, rk = np.round(scores[near], decimals), np.round(kth, decimals)
            above, ties = near[r > rk], near[r == rk][: k - int((r > rk).sum())]
        cand = np.concatenate([above, ties])
    else:
        cand = np.arange(n)
    vals = scores[cand] if decimals is None else np.round(scores[cand], decimals)
    order = np.lexsort((cand, -vals))
    return cand[order], vals[order]


def merge_topk(scores: np.ndarray, positions: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise top-k of (scores, positions) matrices, best first, ties by position.

    Used by blocked dense search: each block's candidates are appended to the running
    top-k and the union is cut back to k, so memory stays O(queries x (k + block)).
    """
    k = min(int(k), scores.shape[1])
    order = np.lexsort((positions, -scores), axis=-1)[:, :k]
    return (np.take_along_axis(scores, order, axis=1),
            np.take_along_axis(positions, order, axis=1))
