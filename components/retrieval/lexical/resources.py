"""The lexical family's costly objects: BM25 indexes, memoised per process.

The bm25 path and the `lexical` rerank signal need the same index over the same chunks;
an RRF-k or rerank sweep calls the stages again on identical chunks. Building once per
(chunks, analyzer and its options, k1, b, epsilon) keeps those calls cheap; the memo is a
small LRU, emptied after a run's last stage (the `lexical indexes` release hook:
runtime/resources.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from ablate.components.contract.config import RetrievalConfig
from ablate.components.contract.records import Chunk
from ablate.components.retrieval import array_folder
from ablate.components.retrieval.indexes import LRU, chunks_fingerprint, disk_key
from ablate.components.retrieval.lexical import bm25_disk
from ablate.components.retrieval.lexical.analyzer import Analyzer, get_analyzer
from ablate.components.retrieval.lexical.analyzers_zh import choose_analyzer
from ablate.components.retrieval.lexical.bm25 import BM25Index
from ablate.components.runtime.resources import on_release

_BM25 = LRU(4)


def lexical(chunks: Sequence[Chunk], cfg: RetrievalConfig,
            folder: Path | None = None) -> tuple[BM25Index, Analyzer]:
    """The BM25 index of `chunks` under the analyzer and cfg.bm25, and the analyzer for
    queries (memoised; the bm25 path and the `lexical` rerank signal share them). Analyzer
    `auto` is resolved from the chunk texts here when the caller has not resolved it for
    the corpus (the sweep flow does, and reports its choice). With `folder`, the index is
    kept there on disk (bm25_disk: read back memory-mapped by any later call, in this
    process or another, with the same chunks, analyzer and parameters)."""
    name = cfg.analyzer
    if name == "auto":
        name = choose_analyzer([c.text for c in chunks])[0]
    analyzer = get_analyzer(name, cfg.analyzer_options)
    key: tuple = (chunks_fingerprint(chunks), name, tuple(sorted(cfg.analyzer_options.items())),
           cfg.bm25.k1, cfg.bm25.b, cfg.bm25.epsilon)
    if cfg.bm25.variant != "okapi":  # okapi's keys (and index folders) as before variants
        key += (cfg.bm25.variant, cfg.bm25.delta)

    def build() -> BM25Index:
        # analysed one chunk at a time as the index reads them: no list of all tokens
        return BM25Index([c.chunk_id for c in chunks], map(analyzer, (c.text for c in chunks)),
                         k1=cfg.bm25.k1, b=cfg.bm25.b, epsilon=cfg.bm25.epsilon,
                         variant=cfg.bm25.variant, delta=cfg.bm25.delta)

    def make() -> BM25Index:
        if folder is None:
            return build()
        where = Path(folder) / f"bm25-{disk_key(bm25_disk.FORMAT, key, cfg.analyzer_options)}"
        return array_folder.kept(where, bm25_disk.load, build, bm25_disk.save)

    return _BM25.get_or_make(key, make), analyzer


def clear_lexical(memo: Mapping[str, Any] | None = None) -> None:
    """Forget the memoised BM25 indexes (after the last stage that reads one)."""
    _BM25.clear()


on_release("lexical indexes", clear_lexical, when="all")
