"""Sharded retrieval on Dask (`runner.shards` > 1): the corpus's chunks in contiguous
shards in chunk-id order, each shard's index built and searched by a Dask worker, each
question's top `retrieval.depth` merged exactly (ablate.components.retrieval.shards), so
the rankings are those of one index over the whole corpus.

What a worker reads is in the cache folder, which every worker must see at the same path
(a shared file system or an object store mount): the chunk texts, sorted by chunk id, in
`shards/<chunking key>.parquet` (written once per chunking; a worker reads the row groups
of its row range only), and for dense the chunk vectors as computed by the stage's own
encoder through the embedding cache (so they are the vectors an unsharded run scores: the
encoder's batches depend on which texts are encoded together) in a `.npy` file beside it,
memory-mapped by row range.

BM25 runs in two phases: each worker analyses its shard and returns its CollectionStats;
they are merged; each worker then builds its shard's index with the merged statistics
(idf and avgdl of the whole corpus) and searches every question. The analysed shard stays
on the worker between the phases (the second phase is sent to the worker that ran the
first; elsewhere it is analysed again).

The cluster: the stage's own when it runs in a Dask worker (`runner.kind: dask`), else
`runner.address`'s scheduler, else a local cluster of `runner.workers` processes started
once per process.
"""

from __future__ import annotations

import atexit
import io
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np

from ablate.components.atomic import atomic_write
from ablate.components.chunk_table import id_order
from ablate.components.errors import InputError
from ablate.components.records import Chunk, Question, Ranking
from ablate.components.retrieval.bm25_stats import CollectionStats
from ablate.components.retrieval.dense import DenseIndex
from ablate.components.retrieval.latency import encode_timed, mark_reused
from ablate.components.retrieval.resources import Resources
from ablate.components.retrieval.shards import AnalysedShard, merge_shards, shard_bounds

if TYPE_CHECKING:
    from distributed import Client

    from ablate.flows.plan.graph import StageNode
    from ablate.flows.plan.spec import LoadedSpec, RunnerSpec
    from ablate.flows.run.context import RunContext

SHARDABLE = ("bm25", "dense")
FOLDER = "shards"  # in the cache folder (a side folder: store.SIDE_FOLDERS)
ROW_GROUP = 1 << 16  # chunk texts per parquet row group: a worker reads whole groups
CONNECT_SECONDS = 5.0


def shardable(path: str, cfg: Any) -> bool:
    """Whether the path runs sharded: bm25, and dense with the exact (flat) index."""
    return path in SHARDABLE and getattr(cfg.retrieval, "dense_index", "flat") == "flat"


# ---- the files workers read -------------------------------------------------------------

def texts_file(root: Path, chunk_key: str, chunks: Sequence[Chunk]) -> Path:
    """The chunk texts, sorted by chunk id, as parquet (written once per chunking)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    path = Path(root) / FOLDER / chunk_key[:2] / f"{chunk_key}.parquet"
    if not path.exists():
        ordered = [chunks[i] for i in id_order(chunks)]
        table = pa.table({"chunk_id": [c.chunk_id for c in ordered],
                          "text": [c.text for c in ordered]})
        atomic_write(path, writer=lambda f: pq.write_table(table, f, row_group_size=ROW_GROUP))
    return path


def vectors_file(texts: Path, encoder: Any, chunks: Sequence[Chunk]) -> Path:
    """The chunk vectors (float32, chunk-id order) of `encoder`, beside the texts."""
    path = texts.with_name(f"{texts.stem}-{encoder.model_id[:16]}.npy")
    if not path.exists():
        in_order = [chunks[i].text for i in id_order(chunks)]
        vectors = np.ascontiguousarray(encoder.encode(in_order), np.float32)
        buf = io.BytesIO()
        np.save(buf, vectors)
        atomic_write(path, buf.getvalue())
    return path


def read_rows(path: Path | str, lo: int, hi: int, text: bool = True
              ) -> tuple[list[str], list[str]]:
    """(chunk ids, texts) of rows [lo, hi) of a texts file, reading only their row groups."""
    import pyarrow.parquet as pq
    pf = pq.ParquetFile(path)
    groups: list[int] = []
    first = start = 0
    for g in range(pf.metadata.num_row_groups):
        n = pf.metadata.row_group(g).num_rows
        if start < hi and start + n > lo:
            first = start if not groups else first
            groups.append(g)
        start += n
    columns = ["chunk_id", "text"] if text else ["chunk_id"]
    table = pf.read_row_groups(groups, columns=columns).slice(lo - first, hi - lo)
    ids = table.column("chunk_id").to_pylist()
    return ids, table.column("text").to_pylist() if text else []


# ---- what workers run -------------------------------------------------------------------

_HELD: dict[tuple, AnalysedShard] = {}  # a worker's analysed shards, between the phases
_HELD_LOCK = threading.Lock()


def _analyse(path: str, lo: int, hi: int, analyzer: str, options: dict) -> AnalysedShard:
    from ablate.components.retrieval import analyzers_zh  # noqa: F401 - registers zh ones
    from ablate.components.retrieval.analyzer import get_analyzer
    try:
        analyse = get_analyzer(analyzer, options)
    except InputError:  # not a built-in analyzer module's: every registration (seconds)
        from ablate.components import catalogue
        catalogue.load()
        analyse = get_analyzer(analyzer, options)
    ids, texts = read_rows(path, lo, hi)
    return AnalysedShard.of(ids, texts, analyse)


def _worker_address() -> str | None:
    from distributed import get_worker
    try:
        return get_worker().address
    except ValueError:
        return None


def bm25_stats(path: str, lo: int, hi: int, analyzer: str, options: dict
               ) -> tuple[CollectionStats, str | None]:
    """Phase 1: analyse rows [lo, hi), keep them here, return their statistics."""
    shard = _analyse(path, lo, hi, analyzer, options)
    with _HELD_LOCK:
        _HELD[(path, lo, hi, analyzer, tuple(sorted(options.items())))] = shard
    return shard.stats(), _worker_address()


def bm25_search(path: str, lo: int, hi: int, analyzer: str, options: dict,
                collection: CollectionStats, bm25: tuple[Any, ...],
                queries: list[list[str]], k: int) -> tuple[list[Ranking], float]:
    """Phase 2: the shard's index with the collection's statistics; every query's top k
    and the seconds the search took."""
    with _HELD_LOCK:
        shard = _HELD.pop((path, lo, hi, analyzer, tuple(sorted(options.items()))), None)
    if shard is None:  # phase 1 ran on another worker
        shard = _analyse(path, lo, hi, analyzer, options)
    index = shard.index(collection, *bm25)
    del shard
    index.prepare(len(queries))
    t0 = time.perf_counter()
    found = index.search_many(queries, k)
    return found, time.perf_counter() - t0


def dense_search(texts: str, vectors: str, lo: int, hi: int, queries: np.ndarray, k: int
                 ) -> tuple[list[Ranking], float]:
    """The shard's exact dense index (its rows of the vectors file, memory-mapped); every
    query's top k and the seconds the search took."""
    ids, _ = read_rows(texts, lo, hi, text=False)
    index = DenseIndex(ids, np.load(vectors, mmap_mode="r")[lo:hi])
    t0 = time.perf_counter()
    found = index.search(queries, k)
    return found, time.perf_counter() - t0


# ---- the cluster --------------------------------------------------------------------------

_LOCAL: dict[int, Any] = {}
_LOCAL_LOCK = threading.Lock()


def _local_client(workers: int) -> Client:
    """A client of this process's local cluster of `workers` single-threaded processes."""
    from distributed import Client, LocalCluster
    with _LOCAL_LOCK:
        if workers not in _LOCAL:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
            client = Client(cluster, set_as_default=False)
            _LOCAL[workers] = client
            atexit.register(_close, client, cluster)
        return _LOCAL[workers]


def _close(client: Any, cluster: Any) -> None:
    try:
        client.close()
        cluster.close()
    except Exception:  # noqa: BLE001 - at exit: nothing left to tell
        pass


class _SecedingClient:
    """The worker's own client, seceding from the worker's thread pool only while it
    waits for shard tasks (`gather`), and releasing `held` (the run context's `heavy`
    lock, when the stage holds it) for that wait. Holding `heavy` across a secede
    deadlocked (issue 39.7): the task that took the freed thread slot waited for `heavy`
    while the seceded thread, holding it, waited for that slot (or its shard tasks for a
    thread). The stage's model work (encoding) runs before the wait, under `heavy`, in
    the worker's slot."""

    def __init__(self, client: Client, held: threading.Semaphore | None) -> None:
        self._client, self._held = client, held

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def gather(self, futures: Any, *args: Any, **kwargs: Any) -> Any:
        from distributed import rejoin, secede
        if self._held is not None:
            self._held.release()
        secede()  # this thread waits, not works: the slot serves other tasks meanwhile
        try:
            return self._client.gather(futures, *args, **kwargs)
        finally:
            rejoin()  # first a slot, then the lock: never the lock while waiting for a slot
            if self._held is not None:
                self._held.acquire()


@contextmanager
def dask_client(runner: RunnerSpec, held: threading.Semaphore | None = None) -> Iterator[Client]:
    """The client shard tasks go to (see the module's docstring). In a Dask worker, the
    worker's own client, seceding only while it waits and releasing `held` (the lock the
    calling stage holds, if any) meanwhile (_SecedingClient)."""
    from distributed import Client, get_client
    if _worker_address() is not None:
        yield _SecedingClient(get_client(), held)  # type: ignore[misc]
    elif runner.kind == "dask" and runner.address:
        client = Client(runner.address, timeout=CONNECT_SECONDS, set_as_default=False)
        try:
            yield client
        finally:
            client.close()
    else:
        yield _local_client(runner.workers)


def check_scheduler(loaded: LoadedSpec) -> None:
    """runner.address, when set, names a Dask scheduler that answers within
    CONNECT_SECONDS (before any stage runs): else one InputError line."""
    runner = loaded.spec.runner
    if runner.kind != "dask" or not runner.address:
        return
    from distributed import Client
    try:
        _tcp_answers(runner.address)  # a refused port fails now, not after the timeout
        Client(runner.address, timeout=CONNECT_SECONDS, set_as_default=False).close()
    except Exception as exc:  # noqa: BLE001 - any failure to connect is the same answer
        why = " ".join(str(exc).split())[:160] or type(exc).__name__
        raise loaded.error(f"cannot reach the Dask scheduler at {runner.address} within "
                           f"{CONNECT_SECONDS:.0f} s ({why})", ("runner", "address")) from None


def _tcp_answers(address: str) -> None:
    """Open and close a TCP connection to a tcp:// or tls:// address (OSError if none)."""
    import socket

    from distributed.comm.addressing import parse_address, parse_host_port
    scheme, location = parse_address(address)
    if scheme in ("tcp", "tls"):
        host, port = parse_host_port(location)
        socket.create_connection((host, port), timeout=CONNECT_SECONDS).close()


# ---- the retrieve stage, sharded ----------------------------------------------------------

def retrieve(ctx: RunContext, node: StageNode, chunks: Sequence[Chunk],
             questions: Sequence[Question], res: Resources,
             latency: dict[str, float] | None) -> dict[str, Ranking]:
    """The retrieve stage of `node.part` over `ctx.spec.runner.shards` shards: what
    retrieve_path gives, {qid: ranking}."""
    assert node.part is not None  # a retrieve node per retrieval path
    held = ctx.heavy if node.model_bound else None  # run_stage holds it for this stage
    with dask_client(ctx.spec.runner, held) as client:
        return search(client, ctx.store.root, node.inputs["chunk"], node.part, chunks,
                      questions, node.config, res, ctx.spec.runner.shards, latency)


def search(client: Client, root: Path, chunk_key: str, path: str, chunks: Sequence[Chunk],
           questions: Sequence[Question], cfg: Any, res: Resources, shards: int,
           latency: dict[str, float] | None = None) -> dict[str, Ranking]:
    """Path `path`'s top `retrieval.depth` for each question over `shards` shards of
    `chunks` (whose texts go to root/shards/<chunk_key>.parquet), on `client`'s workers."""
    if not chunks:
        if latency is not None:
            latency.update({q.qid: 0.0 for q in questions})
        return {q.qid: [] for q in questions}
    bounds = shard_bounds(len(chunks), shards)
    texts = texts_file(root, chunk_key, chunks)
    if path == "bm25":
        per_shard, seconds, each, reused = _bm25(client, texts, bounds, cfg, questions)
    else:
        per_shard, seconds, each, reused = _dense(client, texts, bounds, cfg, questions, res,
                                                  chunks)
    t0 = time.perf_counter()
    found = merge_shards(per_shard, cfg.retrieval.depth)
    shared = (seconds + time.perf_counter() - t0) / max(len(questions), 1)
    if latency is not None:  # the shards search in parallel: the slowest one counts
        latency.update({q.qid: float(s) + shared for q, s in zip(questions, each)})
        mark_reused(latency, reused)
    return {q.qid: r for q, r in zip(questions, found)}


# per shard the rankings of every question; the slowest shard's search seconds; each
# question's own seconds (query analysis or encoding); the questions whose were recorded
Found = tuple[list[list[Ranking]], float, list[float], list[str]]


def _bm25(client: Client, texts: Path, bounds: list[tuple[int, int]], cfg: Any,
          questions: Sequence[Question]) -> Found:
    from ablate.components.retrieval.analyzer import get_analyzer
    name, options = cfg.retrieval.analyzer, dict(cfg.retrieval.analyzer_options)
    analyzer = get_analyzer(name, options)
    t0 = time.perf_counter()
    queries = [list(analyzer(q.question)) for q in questions]
    analysed = (time.perf_counter() - t0) / max(len(questions), 1)
    first = client.gather([client.submit(bm25_stats, str(texts), lo, hi, name, options,
                                         pure=False) for lo, hi in bounds])
    collection = client.scatter([CollectionStats.merge([s for s, _ in first])],
                                broadcast=True)[0]
    b = cfg.retrieval.bm25
    second = client.gather([
        client.submit(bm25_search, str(texts), lo, hi, name, options, collection,
                      (b.k1, b.b, b.epsilon, b.variant, b.delta), queries, cfg.retrieval.depth, pure=False,
                      workers=[where] if where else None, allow_other_workers=True)
        for (lo, hi), (_, where) in zip(bounds, first)])
    return ([r for r, _ in second], max((s for _, s in second), default=0.0),
            [analysed] * len(questions), [])


def _dense(client: Client, texts: Path, bounds: list[tuple[int, int]], cfg: Any,
           questions: Sequence[Question], res: Resources, chunks: Sequence[Chunk]
           ) -> Found:
    encoder = res.encoder(cfg.retrieval.dense_model, cfg.retrieval.dense_backend)
    vectors = vectors_file(texts, encoder, chunks)
    queries = encode_timed(encoder, [q.question for q in questions])
    got = client.gather([client.submit(dense_search, str(texts), str(vectors), lo, hi,
                                       queries.vectors, cfg.retrieval.depth, pure=False)
                         for lo, hi in bounds])
    return ([r for r, _ in got], max((s for _, s in got), default=0.0),
            queries.seconds.tolist(), [q.qid for q, r in zip(questions, queries.reused) if r])
