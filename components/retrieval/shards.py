"""Sharded retrieval, the pure parts: contiguous shards of a corpus in chunk-id order, an
exact merge of per-shard top-k, and the shard contract every path's Sharding keeps (BM25
shards that score with the whole collection's statistics: lexical/sharding.py).

A ranking is best first, ties by chunk id ascending (the project's one tie rule). When
every shard's index gives each document the score one index of the whole corpus would
(dense: `DenseIndex` scores a pair the same over any set of documents; BM25: a shard's
index built with the merged `CollectionStats`), the merged top k of the shards' top k
rankings is the whole index's top k: every document of the global top k is in its own
shard's top k, since a shard holds a subset of the documents ranked by the same order.

The shard contract: a retrieval path declares how it shards by registering with
`shards=` a `Sharding` (`PATHS.register("bm25", ..., shards=...)`; the built-in ones
live beside their paths: lexical/sharding.py, dense/sharding.py); a path that declares none cannot shard, and `runner.shards` > 1 with it
is refused before anything runs (`shard_refusal`, one line). A Sharding says how its
partial results merge (`merge`: STATISTICS, per-shard collection statistics merged before
the shards search, as BM25's CollectionStats; or EXACT_TOPK, shards that score a pair as
one index would, merged by their top k alone) and gives, for a stage, a `ShardWork`: pure
top-level functions (picklable) that a worker runs on a row range of the chunk texts
file (`read_rows`). The flow's side (the Dask work: sending them to workers, gathering,
merging with `merge_shards`) is ablate.flows.run.sharded, which names no component.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

from ablate.components.contract.records import Chunk, Question, Ranking


def shard_bounds(n: int, shards: int) -> list[tuple[int, int]]:
    """`shards` contiguous row ranges [lo, hi) covering 0..n, sizes differing by at most one
    (fewer when n < shards: no empty shard)."""
    if shards < 1:
        raise ValueError(f"shards must be at least 1, got {shards}")
    shards = max(1, min(shards, n))
    base, extra = divmod(n, shards)
    out, lo = [], 0
    for i in range(shards):
        hi = lo + base + (1 if i < extra else 0)
        out.append((lo, hi))
        lo = hi
    return out


def _order(item: tuple[str, float]) -> tuple[float, str]:
    return -item[1], item[0]


def merge_rankings(parts: Sequence[Ranking], k: int) -> Ranking:
    """The top k of the union of rankings that are each best first with ties by id (a
    k-way merge; exact: the scores are compared as they are)."""
    if k <= 0:
        return []
    return list(islice(heapq.merge(*parts, key=_order), k))


def merge_shards(per_shard: Sequence[Sequence[Ranking]], k: int) -> list[Ranking]:
    """Question by question, the merge of each shard's ranking: per_shard[s][q] is shard
    s's ranking of question q (every shard answers the same questions in order)."""
    if not per_shard:
        return []
    n = len(per_shard[0])
    if any(len(p) != n for p in per_shard):
        raise ValueError("shards answered different numbers of questions")
    return [merge_rankings([p[q] for p in per_shard], k) for q in range(n)]


# ---- the shard contract -----------------------------------------------------------------

STATISTICS = "statistics"  # per-shard statistics merged first, then each shard searches
EXACT_TOPK = "exact top-k"  # each shard scores as one index would: its top k merge exactly


@dataclass(frozen=True)
class ShardJob:
    """What a path's Sharding is given for one retrieve stage: the chunk texts file (sorted
    by chunk id: `read_rows`), its shards' row ranges, the chunks and questions, the
    stage's config and resources."""

    texts: Path
    bounds: list[tuple[int, int]]
    chunks: Sequence[Chunk]
    questions: Sequence[Question]
    cfg: Any
    res: Any = None


@dataclass(frozen=True)
class ShardWork:
    """A stage's sharded search, as top-level functions a worker runs on rows [lo, hi):

    - `collect(lo, hi, *collect_args)`: the shard's partial statistics (STATISTICS only), merged
      by `merge(list of them)` into what every shard's search is given;
    - `search(lo, hi, collection, *args)`: (every question's top k over the shard, the
      seconds the search took); `collection` is None without `collect`.

    `seconds` is each question's own online cost paid once (query analysis, encoding),
    `reused` the questions whose seconds were recorded earlier (latency.mark_reused)."""

    search: Callable[..., tuple[list[Ranking], float]]
    args: tuple[Any, ...]
    seconds: list[float]
    reused: list[str] = field(default_factory=list)
    collect: Callable[..., Any] | None = None
    collect_args: tuple[Any, ...] = ()
    merge: Callable[[list[Any]], Any] | None = None


class Sharding(Protocol):
    """How a retrieval path shards (registered with the path: `shards=`)."""

    merge: str  # STATISTICS or EXACT_TOPK

    def refuses(self, cfg: Any) -> str | None:
        """Why this config cannot shard exactly (one line), else None."""

    def work(self, job: ShardJob) -> ShardWork:
        """The stage's sharded search (runs in the caller's process: encoding, analysis)."""


def sharding_of(path: str) -> Sharding | None:
    """The Sharding retrieval path `path` declares, None when it declares none."""
    from ablate.components.contract.registry import registry
    return registry("retrieval path").declaration(path).info.get("shards")


def shard_refusal(path: str, cfg: Any) -> str | None:
    """None when retrieval path `path` shards exactly with `cfg`, else why not (one line)."""
    sharding = sharding_of(path)
    if sharding is None:
        from ablate.components.contract.registry import registry
        can = [n for n in registry("retrieval path").names() if sharding_of(n) is not None]
        return (f"retrieval path '{path}' does not declare how it shards (paths that do: "
                f"{', '.join(can) or 'none'})")
    return sharding.refuses(cfg)


def read_rows(path: Path | str, lo: int, hi: int, text: bool = True
              ) -> tuple[list[str], list[str]]:
    """(chunk ids, texts) of rows [lo, hi) of a texts file (parquet of `chunk_id` and
    `text`, in chunk-id order), reading only their row groups."""
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


def timed_search(search: Any, queries: Any, k: int) -> tuple[list[Ranking], float]:
    """Every query's top k (`search(queries, k)`) and the seconds the search took."""
    t0 = time.perf_counter()
    found = search(queries, k)
    return found, time.perf_counter() - t0
