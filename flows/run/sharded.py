"""Sharded retrieval on Dask (`runner.shards` > 1): the corpus's chunks in contiguous
shards in chunk-id order, each shard's part of the search run by a Dask worker, each
question's top `retrieval.depth` merged exactly (ablate.components.retrieval.shards), so
the rankings are those of one index over the whole corpus.

What is sent to the workers is the path's own: the Sharding it declares with its
registration (the shard contract, components/retrieval/shards.py) gives the functions a
worker runs on its row range and how their partial results merge; this module does only
the Dask work and names no component. A path that declares no Sharding (or a config it
refuses) never gets here: `runner.shards` > 1 with it is refused before anything runs
(flows/plan/preflight.py).

What a worker reads is in the cache folder, which every worker must see at the same path
(a shared file system or an object store mount): the chunk texts, sorted by chunk id, in
`shards/<chunking key>.parquet` (written once per chunking; a worker reads the row groups
of its row range only), and what the path writes beside it (dense: the chunk vectors).

The cluster: the stage's own when it runs in a Dask worker (`runner.kind: dask`), else
`runner.address`'s scheduler, else a local cluster of `runner.workers` processes started
once per process.
"""

from __future__ import annotations

import atexit
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Chunk, Question, Ranking
from ablate.components.retrieval.latency import mark_reused
from ablate.components.retrieval.resources import Resources
from ablate.components.retrieval.shards import (
    ShardJob,
    ShardWork,
    merge_shards,
    shard_bounds,
    shard_refusal,
    sharding_of,
)
from ablate.components.runtime.atomic import atomic_write
from ablate.components.text.chunk_table import id_order

if TYPE_CHECKING:
    from distributed import Client

    from ablate.flows.plan.graph import StageNode
    from ablate.flows.plan.spec import RunnerSpec
    from ablate.flows.plan.spec_load import LoadedSpec
    from ablate.flows.run.context import RunContext

FOLDER = "shards"  # in the cache folder (a side folder: store.SIDE_FOLDERS)
ROW_GROUP = 1 << 16  # chunk texts per parquet row group: a worker reads whole groups
CONNECT_SECONDS = 5.0


def shards_of(runner: RunnerSpec, node: StageNode) -> int:
    """On how many shards a stage runs: `runner.shards` for a retrieve stage (a path that
    cannot shard was refused before the run), else 1."""
    return runner.shards if node.stage == "retrieve" and runner.shards > 1 else 1


def retrieve_shards(ctx: RunContext) -> dict[str, int]:
    """On how many shards each retrieve stage of the plan runs: {"retrieve:<path>
    <key[:10]>": n} (the manifest's `stages.retrieve_shards`)."""
    return {f"{n.label} {k[:10]}": shards_of(ctx.spec.runner, n)
            for k, n in ctx.plan.nodes.items() if n.stage == "retrieve"}


def shown_label(runner: RunnerSpec, node: StageNode) -> str:
    """The stage's label on progress lines, with its shards when it runs on several."""
    n = shards_of(runner, node)
    return f"{node.label} ({n} shards)" if n > 1 else node.label


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


# ---- what workers run -------------------------------------------------------------------

def _on_worker(fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)` on a worker; a component a plugin registered (an analyzer) is found
    after loading every registration (seconds: only when a name is not a built-in's)."""
    try:
        return fn(*args)
    except InputError:
        from ablate.components import catalogue
        catalogue.load()
        return fn(*args)


def _collect(fn: Callable[..., Any], *args: Any) -> tuple[Any, str | None]:
    """Phase 1 on a worker: the shard's statistics and where they were computed (the
    second phase goes there: what the first phase keeps is used)."""
    return _on_worker(fn, *args), _worker_address()


def _worker_address() -> str | None:
    from distributed import get_worker
    try:
        return get_worker().address
    except ValueError:
        return None


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
    print(f"{node.label} {node.key[:8]}: on {ctx.spec.runner.shards} shards", flush=True)
    with dask_client(ctx.spec.runner, held) as client:
        return search(client, ctx.store.root, node.inputs["chunk"], node.part, chunks,
                      questions, node.config, res, ctx.spec.runner.shards, latency)


def search(client: Client, root: Path, chunk_key: str, path: str, chunks: Sequence[Chunk],
           questions: Sequence[Question], cfg: Any, res: Resources | None, shards: int,
           latency: dict[str, float] | None = None) -> dict[str, Ranking]:
    """Path `path`'s top `retrieval.depth` for each question over `shards` shards of
    `chunks` (whose texts go to root/shards/<chunk_key>.parquet), on `client`'s workers,
    as the path's Sharding says (InputError when it declares none or refuses `cfg`)."""
    refused = shard_refusal(path, cfg)
    sharding = sharding_of(path)
    if refused is not None or sharding is None:
        raise InputError(f"runner.shards is {shards}, but {refused}", field="runner.shards")
    if not chunks:
        if latency is not None:
            latency.update({q.qid: 0.0 for q in questions})
        return {q.qid: [] for q in questions}
    bounds = shard_bounds(len(chunks), shards)
    texts = texts_file(root, chunk_key, chunks)
    work = sharding.work(ShardJob(texts, bounds, chunks, questions, cfg, res))
    per_shard, seconds = run_shards(client, work, bounds)
    t0 = time.perf_counter()
    found = merge_shards(per_shard, cfg.retrieval.depth)
    shared = (seconds + time.perf_counter() - t0) / max(len(questions), 1)
    if latency is not None:  # the shards search in parallel: the slowest one counts
        latency.update({q.qid: float(s) + shared for q, s in zip(questions, work.seconds)})
        mark_reused(latency, work.reused)
    return {q.qid: r for q, r in zip(questions, found)}


def run_shards(client: Client, work: ShardWork, bounds: list[tuple[int, int]]
               ) -> tuple[list[list[Ranking]], float]:
    """A ShardWork on `client`'s workers, shard by shard: (per shard every question's
    ranking, the slowest shard's search seconds). With `collect`, the shards' statistics
    first, merged and broadcast; each shard's search then goes to the worker that
    collected it (what it kept is used there)."""
    collection, where = None, [None] * len(bounds)
    if work.collect is not None:
        assert work.merge is not None  # a statistics merge says how
        first = client.gather([client.submit(_collect, work.collect, lo, hi, *work.collect_args,
                                             pure=False) for lo, hi in bounds])
        collection = client.scatter([work.merge([s for s, _ in first])], broadcast=True)[0]
        where = [w for _, w in first]
    got = client.gather([
        client.submit(_on_worker, work.search, lo, hi, collection, *work.args, pure=False,
                      workers=[at] if at else None, allow_other_workers=bool(at))
        for (lo, hi), at in zip(bounds, where)])
    return [r for r, _ in got], max((s for _, s in got), default=0.0)
