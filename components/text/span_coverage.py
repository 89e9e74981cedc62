"""Evidence spans that a chunking can never make relevant: a chunk is relevant to a span
when it covers at least the label threshold of it (labels.label_chunks, `span` mode), so a
span longer than a chunk, or one that every chunk boundary cuts, has no relevant chunk at
that chunking and its question can never be fully retrieved there, whatever the
retrieval. `ablate check` warns per swept chunking (flows/plan/coverable.py)."""

from __future__ import annotations

from typing import Sequence

from ablate.components.contract.records import Chunk, Question
from ablate.components.text.labels import ChunkIndex


def uncoverable_spans(chunks: Sequence[Chunk], questions: Sequence[Question],
                      threshold: float) -> tuple[int, int]:
    """(spans no chunk covers to `threshold` (covered fraction × grade), spans), counted
    once per distinct span of the questions' evidence."""
    spans = {(s.doc_id, s.start, s.end, s.grade) for q in questions for g in q.evidence for s in g
             if s.end > s.start}
    index = ChunkIndex(chunks)
    bad = 0
    for doc_id, start, end, grade in spans:
        best = max(((min(c.end, end) - max(c.start, start)) / (end - start) * grade
                    for c in index.overlapping(doc_id, start, end)), default=0.0)
        bad += best < threshold
    return bad, len(spans)
