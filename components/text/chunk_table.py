"""A chunking's chunks held as columns: ids, document ids and offsets, texts sliced from
the documents only when a chunk is read.

A `ChunkTable` is a `Sequence[Chunk]`, so every stage takes it where it took a list; but a
million chunks cost their id strings and three integer arrays (~100 MB) instead of a
million Chunk objects with a copy of each text (~450 MB), and a stage that needs a few
chunks (the ranked ones, the ones of cited documents) picks them without making the rest
(`select`, `of_documents`; `chunk_map` and `chunks_of_documents` fall back to a scan for
plain lists of chunks).
"""

from __future__ import annotations

from typing import Any, Collection, Iterable, Iterator, Mapping, Sequence, overload

import numpy as np

from ablate.components.contract.records import Chunk, Document


class ChunkTable(Sequence[Chunk]):
    """Chunks as columns over their documents' texts (read-only)."""

    def __init__(self, chunk_ids: Sequence[str], doc_ids: Sequence[str], starts: Iterable[int],
                 ends: Iterable[int], n_tokens: Iterable[int], documents: Mapping[str, Document]) -> None:
        self.ids = list(chunk_ids)
        self.doc_ids = list(doc_ids)
        self.starts = np.asarray(starts, dtype=np.int64)
        self.ends = np.asarray(ends, dtype=np.int64)
        self.n_tokens = np.asarray(n_tokens, dtype=np.int64)
        if not len(self.ids) == len(self.doc_ids) == self.starts.size == self.ends.size == self.n_tokens.size:
            raise ValueError("chunk columns of different lengths")
        self._docs = documents
        self._rows: dict[str, int] | None = None

    @classmethod
    def of(cls, chunks: Sequence[Chunk], documents: Mapping[str, Document]) -> ChunkTable:
        return cls([c.chunk_id for c in chunks], [c.doc_id for c in chunks],
                   [c.start for c in chunks], [c.end for c in chunks],
                   [c.n_tokens for c in chunks], documents)

    @classmethod
    def of_frame(cls, frame: Any, documents: Mapping[str, Document]) -> ChunkTable:
        """From a chunk stage's stored frame (chunk_id, doc_id, start, end, n_tokens)."""
        return cls(frame["chunk_id"].to_list(), frame["doc_id"].to_list(),
                   frame["start"].to_numpy(), frame["end"].to_numpy(),
                   frame["n_tokens"].to_numpy(), documents)

    def __len__(self) -> int:
        return len(self.ids)

    def _chunk(self, i: int) -> Chunk:
        d, s, e = self.doc_ids[i], int(self.starts[i]), int(self.ends[i])
        return Chunk(self.ids[i], d, s, e, self._docs[d].text[s:e], int(self.n_tokens[i]))

    @overload
    def __getitem__(self, i: int) -> Chunk: ...

    @overload
    def __getitem__(self, i: slice) -> list[Chunk]: ...

    def __getitem__(self, i: int | slice) -> Chunk | list[Chunk]:
        if isinstance(i, slice):
            return [self._chunk(j) for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._chunk(i)

    def __iter__(self) -> Iterator[Chunk]:
        docs = self._docs
        for cid, d, s, e, n in zip(self.ids, self.doc_ids, self.starts.tolist(),
                                   self.ends.tolist(), self.n_tokens.tolist()):
            yield Chunk(cid, d, s, e, docs[d].text[s:e], n)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (ChunkTable, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def texts(self) -> Iterator[str]:
        docs = self._docs
        for d, s, e in zip(self.doc_ids, self.starts.tolist(), self.ends.tolist()):
            yield docs[d].text[s:e]

    def select(self, ids: Iterable[str]) -> dict[str, Chunk]:
        """chunk_id -> Chunk for the given ids that are in the table."""
        if self._rows is None:
            self._rows = {cid: i for i, cid in enumerate(self.ids)}
        rows = self._rows
        return {cid: self._chunk(rows[cid]) for cid in ids if cid in rows}

    def of_documents(self, doc_ids: Collection[str]) -> list[Chunk]:
        """The chunks of the given documents, in table order."""
        return [self._chunk(i) for i, d in enumerate(self.doc_ids) if d in doc_ids]


def chunk_map(chunks: Sequence[Chunk], ids: Iterable[str]) -> dict[str, Chunk]:
    """chunk_id -> Chunk for the given ids among `chunks` (a table picks only those)."""
    if isinstance(chunks, ChunkTable):
        return chunks.select(ids)
    wanted = set(ids)
    return {c.chunk_id: c for c in chunks if c.chunk_id in wanted}


def id_order(chunks: Sequence[Chunk]) -> list[int]:
    """The positions of `chunks` sorted by chunk id (a table sorts its id column; nothing
    is copied or made)."""
    ids = chunks.ids if isinstance(chunks, ChunkTable) else [c.chunk_id for c in chunks]
    return sorted(range(len(ids)), key=ids.__getitem__)


def chunks_of_documents(chunks: Sequence[Chunk], doc_ids: Collection[str]) -> list[Chunk]:
    """The chunks of the given documents, in order (a table makes only those)."""
    if isinstance(chunks, ChunkTable):
        return chunks.of_documents(doc_ids)
    return [c for c in chunks if c.doc_id in doc_ids]
