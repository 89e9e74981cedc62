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


def topk_rows(scores: np.ndarray, k: int, decimals: int | None,
              f32: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise `topk_by_position(row, k, decimals)` of a (rows x n) matrix, vectorised:
    (positions, rounded values), each rows x min(k, n), best first, ties by position
    (decimals None: the values as they are; f32: the values cast to float32, which only
    the candidates are, the threshold lowered by a float32 step so every value that
    casts to the k-th one's float passes).

    A row's candidates are the items >= its threshold: the k-th largest of a strided
    subsample (at most the row's true k-th largest, so every item whose rounded value
    reaches the k-th rounded value passes), less one rounding step. One stable sort of all
    rows' candidates by (row, -rounded value) keeps positions ascending within ties; the
    first k per row are the answer. A row with very many candidates (e.g. mostly equal
    scores) is done alone by topk_by_position, so the sort stays small.
    """
    rows, n = scores.shape
    k = min(int(k), n)
    pos = np.zeros((rows, max(k, 0)), dtype=np.int64)
    vals = np.zeros((rows, max(k, 0)), dtype=np.float64)
    if k <= 0 or rows == 0:
        return pos, vals
    if k < n:
        step = max(1, min(n // k, int(np.sqrt(n / (8.0 * k)))))
        sub = scores[:, ::step]
        thr = np.partition(sub, sub.shape[1] - k, axis=1)[:, sub.shape[1] - k]
        if decimals is not None:
            thr = thr - 10.0 ** -decimals
        if f32:
            thr = thr - np.abs(thr) * 2.0 ** -22
        flat = np.flatnonzero(scores >= thr[:, None])
        cap = max(8 * k * step, 512)
    else:
        flat, cap = np.arange(rows * n), n
    row = flat // n
    counts = np.bincount(row, minlength=rows)
    heavy = counts > cap
    if heavy.any():
        for r in np.flatnonzero(heavy).tolist():
            row_r = scores[r].astype(np.float32).astype(np.float64) if f32 else scores[r]
            pos[r], vals[r] = topk_by_position(row_r, k, decimals)
        keep = ~heavy[row]
        flat, row, counts = flat[keep], row[keep], np.where(heavy, 0, counts)
    v = scores.reshape(-1)[flat]
    if f32:
        v = v.astype(np.float32).astype(np.float64)
    if decimals is not None:
        v = np.round(v, decimals)
    order = np.lexsort((-v, row))  # stable: equal (row, value) stay in position order
    rank = np.arange(flat.size) - np.repeat(np.cumsum(counts) - counts, counts)
    take = order[rank < k]
    light = ~heavy
    pos[light] = (flat[take] - row[take] * n).reshape(-1, k)
    vals[light] = v[take].reshape(-1, k)
    return pos, vals
