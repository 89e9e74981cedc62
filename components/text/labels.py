"""Span labels mapped onto any chunking (docs/pipeline.md, "Labels").

Labels are spans, not chunk ids, so they survive every chunking. Two modes:

- `span` (extractive data, SQuAD-like): for each question, each evidence group and each
  chunk, the label is the covered fraction of the best span of the group,
  |chunk ∩ span| / |span|, times the span's grade (1.0 for extractive spans).
- `document` (document-level judgements, BEIR): every chunk of a document that a span of
  the group points into carries that span's grade (the qrel grade), whatever share of the
  document it covers. In `span` mode a BEIR whole-document span makes a chunk relevant
  only when it covers half of the document, so no chunk of a document longer than two
  chunks would ever be relevant.

Graded labels may exceed 1. Only chunks with a positive value are listed. Whether a chunk
is relevant is decided later against one fixed threshold per experiment.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Iterable, Sequence

from ablate.components.contract.records import Chunk, Question
from ablate.components.contract.vocab import LABEL_MODES
from ablate.components.text.chunk_table import chunks_of_documents

# qid -> one {chunk_id: value} per evidence group (empty tuple: no evidence)
Labels = dict[str, tuple[dict[str, float], ...]]


class ChunkIndex:
    """Chunks of each document sorted by start, for overlap look-ups by character range."""

    def __init__(self, chunks: Iterable[Chunk]) -> None:
        by_doc: dict[str, list[Chunk]] = {}
        for c in chunks:
            by_doc.setdefault(c.doc_id, []).append(c)
        self._chunks = {d: sorted(cs, key=lambda c: (c.start, c.end)) for d, cs in by_doc.items()}
        self._starts = {d: [c.start for c in cs] for d, cs in self._chunks.items()}
        self._maxlen = {d: max(c.end - c.start for c in cs) for d, cs in self._chunks.items()}

    def of_document(self, doc_id: str) -> list[Chunk]:
        """Every chunk of doc_id, by start."""
        return list(self._chunks.get(doc_id, ()))

    def overlapping(self, doc_id: str, start: int, end: int) -> list[Chunk]:
        """Chunks of doc_id sharing at least one character with [start, end)."""
        cs = self._chunks.get(doc_id)
        if not cs:
            return []
        starts = self._starts[doc_id]
        lo = bisect_left(starts, start - self._maxlen[doc_id])
        hi = bisect_left(starts, end)
        return [c for c in cs[lo:hi] if c.end > start]


def label_chunks(chunks: Sequence[Chunk], questions: Sequence[Question],
                 mode: str = "span") -> Labels:
    """qid -> per evidence group {chunk_id: label}; `mode` as in the module docstring
    ("span": covered fraction of the best span x grade; "document": the grade)."""
    if mode not in LABEL_MODES:
        raise ValueError(f"unknown label mode '{mode}' (known: {', '.join(LABEL_MODES)})")
    cited = {span.doc_id for q in questions for group in q.evidence for span in group}
    index = ChunkIndex(chunks_of_documents(chunks, cited))  # only documents with evidence
    out: Labels = {}
    for q in questions:
        groups = []
        for group in q.evidence:
            best: dict[str, float] = {}
            for span in group:
                if mode == "document":
                    hits = [(c, span.grade) for c in index.of_document(span.doc_id)]
                else:
                    hits = [(c, (min(c.end, span.end) - max(c.start, span.start))
                             / span.length * span.grade)
                            for c in index.overlapping(span.doc_id, span.start, span.end)]
                for c, value in hits:
                    if value > best.get(c.chunk_id, 0.0):
                        best[c.chunk_id] = value
            groups.append(dict(sorted(best.items())))
        out[q.qid] = tuple(groups)
    return out
