"""Validation of data set records before any compute: one InputError at the first problem.

Loaders parse records and remember where each came from (an Origin: file, line, field
prefix); the checks here look across records (duplicate ids, evidence pointing at unknown
documents or outside their text, unanswerable questions with evidence, empty documents).
Field-type helpers are shared by the loaders so every message has the same shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ablate.components.errors import InputError
from ablate.components.records import Document, Question
from ablate.components.vocab import QUESTION_SPLITS as SPLITS
from ablate.components.vocab import TIERS


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
    return value


def check_documents(docs: Iterable[tuple[Document, Origin]]) -> list[Document]:
    """Unique ids, non-empty text, credibility in 0..1, checked lazily in file order."""
    out: list[Document] = []
    seen: set[str] = set()
    for doc, origin in docs:
        if not doc.doc_id:
            raise origin.error("empty doc_id", "doc_id")
        if doc.doc_id in seen:
            raise origin.error(f"duplicate doc_id '{doc.doc_id}'", "doc_id")
        if not doc.text.strip():
            raise origin.error(f"document '{doc.doc_id}' has empty text", "text")
        if doc.credibility is not None and not 0 <= doc.credibility <= 1:
            raise origin.error("credibility must be within 0..1", "credibility")
        seen.add(doc.doc_id)
        out.append(doc)
    return out


def check_questions(questions: Iterable[tuple[Question, Origin]],
                    documents: Sequence[Document]) -> list[Question]:
    """Unique qids, evidence inside known documents, no evidence on unanswerable questions."""
    doc_lengths = {d.doc_id: len(d.text) for d in documents}
    out: list[Question] = []
    seen: set[str] = set()
    for q, origin in questions:
        if not q.qid:
            raise origin.error("empty qid", "qid")
        if q.qid in seen:
            raise origin.error(f"duplicate qid '{q.qid}'", "qid")
        seen.add(q.qid)
        if not q.answerable and q.evidence:
            raise origin.error(f"unanswerable question '{q.qid}' has evidence", "evidence")
        if q.tier is not None and q.tier not in TIERS:
            raise origin.error(f"tier '{q.tier}' is not one of {', '.join(TIERS)}", "tier")
        if q.split is not None and q.split not in SPLITS:
            raise origin.error(f"split '{q.split}' is not one of {', '.join(SPLITS)}", "split")
        for g, group in enumerate(q.evidence):
            if not group:
                raise origin.error("empty evidence group", f"evidence[{g}]")
            for a, span in enumerate(group):
                where = f"evidence[{g}][{a}]"
                if span.doc_id not in doc_lengths:
                    raise origin.error(f"unknown document '{span.doc_id}'", where + ".doc_id")
                if span.start < 0:
                    raise origin.error(f"span start {span.start} is negative", where + ".start")
                if span.end <= span.start:
                    raise origin.error(f"empty span [{span.start}, {span.end})", where + ".end")
                n = doc_lengths[span.doc_id]
                if span.end > n:
                    raise origin.error(f"span end {span.end} is beyond the text of "
                                       f"'{span.doc_id}' ({n} characters)", where + ".end")
                if span.grade <= 0:
                    raise origin.error("span grade must be positive", where + ".grade")
        out.append(q)
    return out


def answerable_without_evidence(questions: Iterable[Question]) -> list[str]:
    """qids of answerable questions with no evidence span: valid, but their retrieval
    metrics are undefined and their failure bucket is `no_evidence`, so say how many."""
    return [q.qid for q in questions if q.answerable and not q.evidence]
