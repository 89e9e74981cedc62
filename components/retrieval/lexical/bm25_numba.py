"""Optional compiled kernel for BM25Index.search_many: all queries in one numba call.

Used when numba is installed (the `fast-bm25` extra); otherwise BM25Index falls back to
its numpy blocks, which give the same rankings. Per query: the scores are summed in the
numpy path's order (dense-row terms, then posting terms, each in term order, each weight
times the term's count) with the same operations (numba fuses no multiply-add without
fastmath), so they are bitwise the same; the top-k rule is topk_by_position's (rounded
scores, ties by position). JIT: compiled on first use and kept in numba's disk cache
(__pycache__ beside this file, or NUMBA_CACHE_DIR), so later processes load it.
"""

from __future__ import annotations

import importlib.util
import threading

import numpy as np

# BM25Index uses the kernel when True (tests switch it off to check the numpy path).
# numba itself is imported on first use only (its import took 0.35 s here).
ENABLED = importlib.util.find_spec("numba") is not None
_LOCK = threading.Lock()
_kernel = None  # _search, compiled

# The kernel pays for itself on large batches only: loading it took ~0.5 s and ~150 MB
# resident here (numba's import and its disk cache; the first compile ~5 s), while the
# numpy path costs ~6 ns per query x document pair at 20k documents. Below MIN_WORK
# pairs (about half a second of numpy work) search_many keeps to numpy, unless the
# kernel is loaded already.
MIN_WORK = 10**8


def worth(n_queries: int, n_docs: int) -> bool:
    """Whether search_many should use the kernel for this batch."""
    return ENABLED and (_kernel is not None or n_queries * n_docs >= MIN_WORK)


def load() -> None:
    """Compile the kernel, or load it from numba's disk cache (before timing a batch)."""
    _compiled()


def _kth_largest(vals, k, heap):
    """The k-th largest of vals (k <= vals.size), with a min-heap of k in `heap`."""
    for i in range(k):
        heap[i] = vals[i]
    heap[:k].sort()  # ascending: a valid min-heap
    for i in range(k, vals.size):
        v = vals[i]
        if v > heap[0]:
            heap[0] = v
            j = 0
            while True:
                c = 2 * j + 1
                if c >= k:
                    break
                if c + 1 < k and heap[c + 1] < heap[c]:
                    c += 1
                if heap[c] >= heap[j]:
                    break
                heap[c], heap[j] = heap[j], heap[c]
                j = c
    return heap[0]


def _score(q, qptr, term, count, slot, dense, indptr, indices, data, scores, rows, mult):
    """scores := query q's raw scores. Dense-row terms first, two per pass over the
    documents (((a + b) + c) + d, as adding them one by one), then posting terms."""
    nd = 0
    for p in range(qptr[q], qptr[q + 1]):
        if slot[term[p]] >= 0:
            rows[nd] = slot[term[p]]
            mult[nd] = count[p]
            nd += 1
    n = scores.size
    if nd == 0:
        scores[:] = 0.0
    elif nd == 1:
        a, ca = dense[rows[0]], mult[0]
        for d in range(n):
            scores[d] = a[d] * ca
    else:
        a, ca, b, cb = dense[rows[0]], mult[0], dense[rows[1]], mult[1]
        for d in range(n):
            scores[d] = a[d] * ca + b[d] * cb
    j = 2
    while j + 1 < nd:
        a, ca, b, cb = dense[rows[j]], mult[j], dense[rows[j + 1]], mult[j + 1]
        for d in range(n):
            scores[d] = (scores[d] + a[d] * ca) + b[d] * cb
        j += 2
    if j < nd:
        a, ca = dense[rows[j]], mult[j]
        for d in range(n):
            scores[d] += a[d] * ca
    for p in range(qptr[q], qptr[q + 1]):
        t = term[p]
        if slot[t] < 0:
            c = np.float64(count[p])
            for e in range(indptr[t], indptr[t + 1]):
                scores[indices[e]] += data[e] * c


def _top(scores, k, scale, f32, step, sub, heap, cand, cval, pos, val):
    """topk_by_position(scores, k, decimals) into pos/val (k <= scores.size); sub, heap,
    cand, cval are scratch buffers from _buffers. f32: each score as float32 (cast where
    it is read, so no extra pass over the scores)."""
    n = scores.size
    # candidates: >= the k-th largest of a strided subsample (at most the true k-th) less
    # one rounding step: every item whose rounded score can be in the top-k (scale 0:
    # no rounding, the scores are compared as they are)
    thr = -np.inf
    if k < n:
        for i in range(sub.size):  # ceil(n / step) >= k items, step <= n // k
            sub[i] = np.float32(scores[i * step]) if f32 else scores[i * step]
        thr = _kth_largest(sub, k, heap) - (1.0 / scale if scale > 0.0 else 0.0)
    m = 0
    for d in range(n):
        x = np.float64(np.float32(scores[d])) if f32 else scores[d]
        if x >= thr:
            cand[m] = d
            cval[m] = x
            m += 1
    # rounded values above the k-th rounded value, best first (inserted after equal values,
    # so positions ascend within ties), then the values equal to it by position
    rk = _kth_largest(cval[:m], k, heap)
    if scale > 0.0:
        rk = np.rint(rk * scale) / scale
    i = 0
    for j in range(m):
        r = np.rint(cval[j] * scale) / scale if scale > 0.0 else cval[j]
        if r > rk:
            at = i
            while at > 0 and val[at - 1] < r:
                val[at], pos[at] = val[at - 1], pos[at - 1]
                at -= 1
            val[at], pos[at] = r, cand[j]
            i += 1
    for j in range(m):
        if i == k:
            break
        r = np.rint(cval[j] * scale) / scale if scale > 0.0 else cval[j]
        if r == rk:
            val[i], pos[i] = r, cand[j]
            i += 1


def _buffers(n, k):
    """(step, sub, heap, cand, cval) for _top on n scores."""
    step = max(1, min(n // k, 16))
    return (step, np.empty((n + step - 1) // step, dtype=np.float64), np.empty(k, dtype=np.float64),
            np.empty(n, dtype=np.int64), np.empty(n, dtype=np.float64))


def _search(qptr, term, count, slot, dense, indptr, indices, data, n, k, scale, f32, pos, val):
    """Each query's top-k positions and rounded scores into pos/val (queries x k, k <= n);
    f32: each score is first cast to float32 (Lucene's float total of a double sum)."""
    scores = np.empty(n, dtype=np.float64)
    rows = np.empty(term.size + 1, dtype=np.int64)
    mult = np.empty(term.size + 1, dtype=np.float64)
    step, sub, heap, cand, cval = _buffers(n, k)
    for q in range(qptr.size - 1):
        _score(q, qptr, term, count, slot, dense, indptr, indices, data, scores, rows, mult)
        _top(scores, k, scale, f32, step, sub, heap, cand, cval, pos[q], val[q])


def _rows(scores, k, scale, pos, val):
    step, sub, heap, cand, cval = _buffers(scores.shape[1], k)
    for r in range(scores.shape[0]):
        _top(scores[r], k, scale, False, step, sub, heap, cand, cval, pos[r], val[r])


def _compiled():
    """The kernel: compiled on first use (measured 5.3 s with numba's import), later
    loaded from numba's disk cache (0.5 s)."""
    global _kth_largest, _score, _top, _buffers, _rows, _kernel
    with _LOCK:
        if _kernel is None:
            from numba import njit
            jit = njit(cache=True, nogil=True)
            # the kernels call the helpers by their global names, so those are rebound first
            _kth_largest, _score, _top, _buffers = map(jit, (_kth_largest, _score, _top, _buffers))
            _rows, _kernel = jit(_rows), jit(_search)
    return _kernel


def search(qptr: np.ndarray, term: np.ndarray, count: np.ndarray, slot: np.ndarray,
           dense: np.ndarray, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
           n: int, k: int, decimals: int | None, f32: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(positions, rounded scores), each queries x min(k, n), best first, ties by position
    (decimals None: not rounded; f32: the scores cast to float32 first)."""
    k = min(int(k), n)
    pos = np.zeros((qptr.size - 1, k), dtype=np.int64)
    val = np.zeros((qptr.size - 1, k), dtype=np.float64)
    if k > 0:
        _compiled()(qptr, term, count, slot, dense, indptr, indices, data, n, k,
                    0.0 if decimals is None else 10.0 ** decimals, bool(f32), pos, val)
    return pos, val


def topk_rows(scores: np.ndarray, k: int, decimals: int) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's top-k on given scores: same contract as topk.topk_rows (for tests)."""
    rows, n = scores.shape
    k = min(int(k), n)
    pos = np.zeros((rows, max(k, 0)), dtype=np.int64)
    val = np.zeros((rows, max(k, 0)), dtype=np.float64)
    if k > 0:
        _compiled()
        _rows(np.ascontiguousarray(scores, dtype=np.float64), k, 10.0 ** decimals, pos, val)
    return pos, val
