"""Validation of data set records before any compute: an InputError at the first problem,
or, inside `collecting()` (`ablate validate`), every problem up to a limit.

Loaders parse records and remember where each came from (an Origin: file, line, field
prefix); the checks here look across records (duplicate ids, evidence pointing at unknown
documents or outside their text, unanswerable questions with evidence, empty documents).
Field-type helpers are shared by the loaders so every message has the same shape.

A loader hands each record's problem to `report`, which raises it, or, while collecting,
records it, and the loader goes on with the next record (one problem per record: its
first). A document that failed is remembered (`reject`), so the evidence pointing at it
is not reported again as pointing at an unknown document.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Sequence

from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Document, Question
from ablate.components.contract.vocab import QUESTION_SPLITS as SPLITS
from ablate.components.contract.vocab import TIERS


@dataclass(frozen=True)
class Origin:
    """Where a record came from: file, 1-based line (None if unknown) and a field prefix."""

    path: str
    line: int | None = None
    prefix: str = ""

    def field(self, name: str) -> str:
        if not self.prefix:
            return name
        return f"{self.prefix}.{name}" if name and not name.startswith("[") else self.prefix + name

    def error(self, message: str, name: str = "") -> InputError:
        return InputError(message, path=self.path, line=self.line,
                          field=self.field(name) or None)


ERROR_LIMIT = 20  # problems `ablate validate` lists before "... and N more"


@dataclass
class Collected:
    """The problems found while collecting: the first `limit` of them and how many in all."""

    limit: int = ERROR_LIMIT
    errors: list[InputError] = field(default_factory=list)
    total: int = 0
    rejected: set[str] = field(default_factory=set)  # ids of documents that failed

    def add(self, exc: InputError) -> None:
        self.total += 1
        if len(self.errors) < self.limit:
            self.errors.append(exc)

    def lines(self) -> list[str]:
        """One line per listed problem, then '... and N more' when there are more."""
        more = self.total - len(self.errors)
        return [e.one_line() for e in self.errors] + (
            [f"... and {more} more ({self.total} errors in all)"] if more > 0 else [])


_COLLECTING: ContextVar[Collected | None] = ContextVar("ablate_data_problems", default=None)


@contextmanager
def collecting(limit: int = ERROR_LIMIT) -> Iterator[Collected]:
    """Within this block, data set problems are recorded (`report`) instead of raised."""
    found = Collected(limit)
    token = _COLLECTING.set(found)
    try:
        yield found
    finally:
        _COLLECTING.reset(token)


def report(exc: InputError) -> None:
    """Raise `exc`; while collecting, record it (the caller then skips the record)."""
    found = _COLLECTING.get()
    if found is None:
        raise exc from None
    found.add(exc)


def reject(doc_id: object) -> None:
    """While collecting: the document `doc_id` failed, so evidence naming it is not checked."""
    found = _COLLECTING.get()
    if found is not None and isinstance(doc_id, str):
        found.rejected.add(doc_id)


def rejected() -> set[str]:
    """The ids of the documents that failed so far (empty unless collecting)."""
    found = _COLLECTING.get()
    return found.rejected if found is not None else set()


def problems() -> int:
    """How many problems were recorded so far (0 unless collecting)."""
    found = _COLLECTING.get()
    return found.total if found is not None else 0


_TYPE_NAMES = {str: "a string", bool: "a boolean", int: "an integer", float: "a number",
               list: "a list", dict: "an object"}


def _is(value: Any, kind: type) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, kind)


def need(obj: dict, name: str, kind: type, origin: Origin, *, optional: bool = False,
         default: Any = None) -> Any:
    """obj[name] checked to be of `kind` (None allowed when optional); InputError otherwise."""
    if name not in obj or (optional and obj[name] is None):
        if optional:
            return default
        raise origin.error("missing required field", name)
    value = obj[name]
    if not _is(value, kind):
        raise origin.error(f"must be {_TYPE_NAMES[kind]}, got {type(value).__name__}", name)
    if kind is float and not math.isfinite(value):
        raise origin.error(f"must be a finite number, got {value}", name)
    return value


def _document_problem(doc: Document, origin: Origin, seen: set[str]) -> InputError | None:
    if not doc.doc_id:
        return origin.error("empty doc_id", "doc_id")
    if doc.doc_id in seen:
        return origin.error(f"duplicate doc_id '{doc.doc_id}'", "doc_id")
    if not doc.text.strip():
        return origin.error(f"document '{doc.doc_id}' has empty text", "text")
    if doc.credibility is not None and not 0 <= doc.credibility <= 1:
        return origin.error("credibility must be within 0..1", "credibility")
    return None


def check_documents(docs: Iterable[tuple[Document, Origin]]) -> list[Document]:
    """Unique ids, non-empty text, credibility in 0..1, checked lazily in file order."""
    out: list[Document] = []
    seen: set[str] = set()
    for doc, origin in docs:
        problem = _document_problem(doc, origin, seen)
        if problem is not None:
            report(problem)
            if doc.doc_id not in seen:
                reject(doc.doc_id)
            continue
        seen.add(doc.doc_id)
        out.append(doc)
    return out


def _question_problem(q: Question, origin: Origin, doc_lengths: dict[str, int],
                      skip: set[str]) -> InputError | None:
    """The first problem of one question on its own (evidence naming a document in `skip`,
    one that failed, is not checked)."""
    if not q.answerable and q.evidence:
        return origin.error(f"unanswerable question '{q.qid}' has evidence", "evidence")
    if q.tier is not None and q.tier not in TIERS:
        return origin.error(f"tier '{q.tier}' is not one of {', '.join(TIERS)}", "tier")
    if q.split is not None and q.split not in SPLITS:
        return origin.error(f"split '{q.split}' is not one of {', '.join(SPLITS)}", "split")
    for g, group in enumerate(q.evidence):
        if not group:
            return origin.error("empty evidence group", f"evidence[{g}]")
        for a, span in enumerate(group):
            where = f"evidence[{g}][{a}]"
            if span.doc_id in skip:
                continue
            if span.doc_id not in doc_lengths:
                return origin.error(f"unknown document '{span.doc_id}'", where + ".doc_id")
            if span.start < 0:
                return origin.error(f"span start {span.start} is negative", where + ".start")
            if span.end <= span.start:
                return origin.error(f"empty span [{span.start}, {span.end})", where + ".end")
            n = doc_lengths[span.doc_id]
            if span.end > n:
                return origin.error(f"span end {span.end} is beyond the text of "
                                    f"'{span.doc_id}' ({n} characters)", where + ".end")
            if not (math.isfinite(span.grade) and span.grade > 0):  # NaN > 0 is False
                return origin.error(f"span grade must be a positive finite number, got {span.grade}",
                                    where + ".grade")
    return None


def check_questions(questions: Iterable[tuple[Question, Origin]],
                    documents: Sequence[Document]) -> list[Question]:
    """Unique qids, evidence inside known documents, no evidence on unanswerable questions."""
    doc_lengths = {d.doc_id: len(d.text) for d in documents}
    out: list[Question] = []
    seen: set[str] = set()
    for q, origin in questions:
        if not q.qid:
            report(origin.error("empty qid", "qid"))
            continue
        if q.qid in seen:
            report(origin.error(f"duplicate qid '{q.qid}'", "qid"))
            continue
        seen.add(q.qid)
        problem = _question_problem(q, origin, doc_lengths, rejected())
        if problem is not None:
            report(problem)
            continue
        out.append(q)
    return out


def answerable_without_evidence(questions: Iterable[Question]) -> list[str]:
    """qids of answerable questions with no evidence span: valid, but their retrieval
    metrics are undefined and their failure bucket is `no_evidence`, so say how many."""
    return [q.qid for q in questions if q.answerable and not q.evidence]
