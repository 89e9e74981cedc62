"""Typed frozen records passed between stages (docs/data-format.md).

Evidence is a tuple of groups; each group is a tuple of alternative spans. A question
is fully supported when every group is matched by at least one of its spans.
Offsets are character offsets into Document.text, end exclusive.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Ranking = list[tuple[str, float]]  # (chunk id, score), best first, ties by chunk id


@dataclass(frozen=True, slots=True)  # slots: a million documents without a dict each
class Document:
    doc_id: str
    text: str
    title: str | None = None
    source: str | None = None
    credibility: float | None = None
    metadata: dict[str, Any] | None = field(default=None, compare=False, hash=False)


@dataclass(frozen=True)
class Span:
    doc_id: str
    start: int
    end: int
    grade: float = 1.0  # graded relevance (BEIR qrels); 1.0 for extractive spans

    @property
    def length(self) -> int:
        return self.end - self.start


EvidenceGroup = tuple[Span, ...]


@dataclass(frozen=True)
class Question:
    qid: str
    question: str
    answers: tuple[str, ...]
    answerable: bool
    evidence: tuple[EvidenceGroup, ...] = ()
    cluster: str | None = None
    type: str | None = None
    tier: str | None = None
    split: str | None = None
    # the question file's own further columns (`level`, `hops`, a team's own): (name,
    # value as text) pairs sorted by name, for report.slices (data/question_columns.py)
    columns: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Dataset:
    """A corpus and its questions; `fingerprint` is a content hash of both."""

    documents: tuple[Document, ...]
    questions: tuple[Question, ...]
    fingerprint: str
    source: str = ""

    def doc_by_id(self) -> dict[str, Document]:
        """doc_id -> Document, built once per data set (stages ask for it repeatedly)."""
        index = self.__dict__.get("_doc_by_id")
        if index is None:
            index = {d.doc_id: d for d in self.documents}
            object.__setattr__(self, "_doc_by_id", index)
        return index


@dataclass(frozen=True, slots=True)  # slots: a million chunks without a dict each
class Chunk:
    """A contiguous piece of one document: text == document.text[start:end]."""

    chunk_id: str
    doc_id: str
    start: int
    end: int
    text: str
    n_tokens: int


@dataclass(frozen=True)
class Passage:
    """A piece of the final prompt: one document range (overlapping/adjacent chunks merged)."""

    doc_id: str
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class PackedContext:
    """The context of one question after packing ranked chunks into the token budget.

    chunk_ids: chunks included, in rank order. passages: merged document ranges in the
    order they appear in the prompt. cut_chunk_ids: chunks ranked inside the rerank depth
    that did not fit the budget. n_tokens: tokens of the experiment tokenizer.
    """

    chunk_ids: tuple[str, ...]
    passages: tuple[Passage, ...]
    n_tokens: int
    budget: int
    cut_chunk_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Answer:
    """What a generator returned for one question.

    `text` is the answer as scored (a citing generator's passage markers removed).
    `citations`: the context passages the answer cites, as numbered in the prompt (1-based,
    in the order of PackedContext.passages; order of first citation, each once; numbers
    outside the context kept as written); None when the generator does not cite (no
    `prompt.cite`, closed book), () when it cites but this answer cited nothing.
    `score`: the generator's confidence in the answer, the figure its refusal threshold
    applies to (the extractive generator's support); None when it records none. The
    report's risk-coverage table sweeps a threshold over it."""

    text: str
    refused: bool
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    cached: bool = False
    error: str | None = None
    citations: tuple[int, ...] | None = None
    score: float | None = None
