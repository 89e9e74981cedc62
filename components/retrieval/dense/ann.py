"""The dense index as an ablation variable (`retrieval.dense_index`): exact or FAISS.

- `flat`: dense.DenseIndex, the exact blocked search (the default). It is `neutral`: the
  behaviour from before the index was a variable, so a flat run's stage keys, rankings
  and cached results are those it had.
- `flat16`: the exact search over vectors stored in float16 (DenseIndex(dtype="float16"):
  half the memory; each block widened to float32, scores those of the widened vectors).
- `hnsw`: faiss.IndexHNSWFlat over inner products (the vectors are L2-normalised, so this
  is cosine), M `retrieval.ann.hnsw_m`, efConstruction and efSearch (at least the depth).
- `ivf`: faiss.IndexIVFFlat over inner products: `ivf_cells` k-means cells (spherical,
  seeded, trained on at most 64 vectors a cell), `ivf_nprobe` of them searched.

Rankings keep the project's rule: best first, ties by chunk id ascending. Vectors are
held in chunk-id order (a position is an id's rank), an approximate index proposes its
top k positions and they are scored by dense.exact_scores (as flat scores them: each
pair's dot product in float64 rounded once to float32), then sorted by (score descending, position). An approximate
index also keeps the exact index over the same vectors (`exact`) so a stage can record
the exact top k beside the approximate one: recall against flat is a metric.

Determinism: FAISS inserts into an HNSW graph from several OpenMP threads in an order
that varies run to run, and k-means over several threads may sum in another order, so
every build here runs on one thread (`one_thread`); the HNSW level generator and the
k-means sampling are seeded. Searching is parallel over questions only (each question's
search is sequential), so two builds give the same rankings (tested).

Small corpora: k above the corpus size returns what the index finds (at most every
chunk); the cells are never more than the vectors; an IVF search whose probed cells hold
fewer than k vectors returns fewer (that is what IVF does; nprobe = nlist is exact).
"""

from __future__ import annotations

import math
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ablate.components.contract.config import AnnConfig
from ablate.components.contract.records import Ranking
from ablate.components.contract.registry import Registry
from ablate.components.retrieval.dense.encoder import DenseIndex, exact_scores

SEED = 1234  # the k-means sampling and initialisation of `ivf`
POINTS_PER_CELL = 64  # the most vectors a cell's k-means trains on (a sample beyond it)
MIN_POINTS_PER_CELL = 39  # FAISS's advice: the automatic nlist keeps at least this many
MAX_AUTO_CELLS = 1024
KMEANS_ITERATIONS = 20
_BUILD_LOCK = threading.Lock()


# ids, their vectors (rows), the parameters -> an index with `search(queries, k)`: the top
# k (id, score) per query row, best first, ties by id
Builder = Callable[[Sequence[str], np.ndarray, AnnConfig], Any]
DENSE_INDEXES: Registry[Builder] = Registry("dense index", config_field="retrieval.dense_index")


@contextmanager
def one_thread() -> Iterator[None]:
    """FAISS's OpenMP on one thread for the duration (a build), then as it was."""
    import faiss
    with _BUILD_LOCK:
        before = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)
        try:
            yield
        finally:
            faiss.omp_set_num_threads(before)


def ivf_cells(n: int, nlist: int) -> int:
    """The cells of an IVF index over n vectors: `nlist`, or for 0 4·sqrt(n) with at
    least MIN_POINTS_PER_CELL vectors a cell and at most MAX_AUTO_CELLS; always 1..n."""
    if n <= 0:
        return 1
    if nlist <= 0:
        nlist = min(round(4 * math.sqrt(n)), n // MIN_POINTS_PER_CELL, MAX_AUTO_CELLS)
    return max(1, min(int(nlist), n))


class FaissIndex:
    """An approximate FAISS index over vectors held in id order; `exact` is the exact
    index over the same vectors (dense.DenseIndex, which has no `exact`)."""

    def __init__(self, ids: Sequence[str], vectors: np.ndarray,
                 make: Callable[[np.ndarray], Any], params: Callable[[int], Any]) -> None:
        self.exact = DenseIndex(ids, vectors)  # sorts by id: position order is id order
        self.ids = self.exact.ids
        self.vectors = self.exact.vectors
        self._params = params  # k -> faiss.SearchParameters
        self.index = None
        if len(self.ids):
            with one_thread():
                self.index = make(self.vectors)

    def search(self, queries: np.ndarray, k: int) -> list[Ranking]:
        """Top-k (id, score) per query row: the index's candidates scored by
        `exact_scores` (as flat scores them), best first, ties by id."""
        q = np.ascontiguousarray(queries, dtype=np.float32)
        k = min(int(k), len(self.ids))
        if k <= 0 or self.index is None or q.shape[0] == 0:
            return [[] for _ in range(q.shape[0])]
        _, labels = self.index.search(q, k, params=self._params(k))
        rows, pos = np.nonzero(labels >= 0)
        pos = labels[rows, pos].astype(np.int64)
        scores = exact_scores(q[rows], self.vectors[pos])
        order = np.lexsort((pos, -scores, rows))  # by question, score descending, position
        rows, pos, scores = rows[order], pos[order], scores[order]
        starts = np.searchsorted(rows, np.arange(q.shape[0] + 1))
        return [[(self.ids[p], float(s)) for p, s in zip(pos[a:b].tolist(), scores[a:b].tolist())]
                for a, b in zip(starts[:-1], starts[1:])]


@DENSE_INDEXES.register("flat", neutral=True, shards="exact")  # shards.py: a pair scores alike anywhere
def flat(ids: Sequence[str], vectors: np.ndarray, ann: AnnConfig) -> DenseIndex:
    """Exact: every vector scored (dense.DenseIndex)."""
    return DenseIndex(ids, vectors)


class HalfIndex(DenseIndex):
    """flat over float16 vectors, with the float32 flat index beside it (`exact`), for
    recall against flat; alone (exact=False) it holds half of flat's memory."""

    def __init__(self, ids: Sequence[str], vectors: np.ndarray, exact: bool = True) -> None:
        super().__init__(ids, vectors, dtype="float16")
        self.exact = DenseIndex(ids, vectors) if exact else None


@DENSE_INDEXES.register("flat16")
def flat16(ids: Sequence[str], vectors: np.ndarray, ann: AnnConfig) -> HalfIndex:
    """Exact search over the vectors stored in float16 (half the memory); scores are
    the widened vectors' exact products, so rankings can differ slightly from flat's."""
    return HalfIndex(ids, vectors)


@DENSE_INDEXES.register("hnsw", reads=("retrieval.ann.hnsw_m", "retrieval.ann.hnsw_ef_construction",
                                       "retrieval.ann.hnsw_ef_search"),
                        libraries=("faiss-cpu",))
def hnsw(ids: Sequence[str], vectors: np.ndarray, ann: AnnConfig) -> FaissIndex:
    """FAISS HNSW graph (IndexHNSWFlat), inner product."""
    import faiss

    def make(x: np.ndarray) -> Any:
        index = faiss.IndexHNSWFlat(x.shape[1], ann.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = ann.hnsw_ef_construction
        index.add(x)
        return index
    return FaissIndex(ids, vectors, make,
                      lambda k: faiss.SearchParametersHNSW(  # type: ignore[attr-defined]
                          efSearch=max(ann.hnsw_ef_search, k)))


@DENSE_INDEXES.register("ivf", reads=("retrieval.ann.ivf_nlist", "retrieval.ann.ivf_nprobe"),
                        libraries=("faiss-cpu",))
def ivf(ids: Sequence[str], vectors: np.ndarray, ann: AnnConfig) -> FaissIndex:
    """FAISS inverted file (IndexIVFFlat) over seeded spherical k-means cells, inner product."""
    import faiss
    nlist = ivf_cells(vectors.shape[0], ann.ivf_nlist)

    def make(x: np.ndarray) -> Any:
        quantizer = faiss.IndexFlatIP(x.shape[1])
        index = faiss.IndexIVFFlat(quantizer, x.shape[1], nlist, faiss.METRIC_INNER_PRODUCT)
        # (FAISS's wrapper keeps the quantizer alive with the index: referenced_objects)
        cp = index.cp
        cp.seed, cp.niter, cp.spherical, cp.verbose = SEED, KMEANS_ITERATIONS, True, False
        cp.max_points_per_centroid, cp.min_points_per_centroid = POINTS_PER_CELL, 1
        index.train(x)
        index.add(x)
        return index
    return FaissIndex(ids, vectors, make,
                      lambda k: faiss.SearchParametersIVF(  # type: ignore[call-arg]
                          nprobe=min(ann.ivf_nprobe, nlist)))
