"""Loader for the native JSONL format (docs/data-format.md), plain or gzip.

A folder holds corpus.jsonl(.gz) and questions.jsonl(.gz). Every record is type-checked
as it is read, so a bad line is reported with its file, line number and field (the first
one, or, while collecting, every one: ablate.components.data.validate.report).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Callable, Iterator, TypeVar

from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Document, Question, Span
from ablate.components.data import finite_json
from ablate.components.data.question_columns import scalar_columns
from ablate.components.data.validate import Origin, need, reject, report


def find_file(folder: Path, stem: str) -> Path | None:
    """folder/stem.jsonl or folder/stem.jsonl.gz (the plain file wins), or None."""
    for name in (f"{stem}.jsonl", f"{stem}.jsonl.gz"):
        p = folder / name
        if p.is_file():
            return p
    return None


def read_jsonl(path: Path) -> Iterator[tuple[dict, Origin]]:
    """Yield (object, origin) per non-blank line; InputError on bytes, JSON or non-objects."""
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                origin = Origin(str(path), lineno)
                try:
                    text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
                except UnicodeDecodeError as exc:
                    report(origin.error(f"undecodable bytes (not UTF-8) at byte {exc.start}"))
                    continue
                if not text.strip():
                    continue
                try:
                    obj = finite_json.loads(text)
                except json.JSONDecodeError as exc:
                    report(origin.error(f"invalid JSON: {exc.msg} (column {exc.colno})"))
                    continue
                except finite_json.NonFinite as exc:
                    report(origin.error(str(exc)))
                    continue
                if not isinstance(obj, dict):
                    report(origin.error(f"a line must hold a JSON object, got {type(obj).__name__}"))
                    continue
                yield obj, origin
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InputError(f"cannot read file: {exc}", path=str(path)) from None


R = TypeVar("R")


def parsed(rows: Iterator[tuple[dict, Origin]], parse: Callable[[dict, Origin], R],
           id_field: str | None = None) -> Iterator[tuple[R, Origin]]:
    """(record, origin) per row that parses; a row that does not is reported (and, for a
    document, its `id_field` value remembered as rejected)."""
    for obj, origin in rows:
        try:
            record = parse(obj, origin)
        except InputError as exc:
            report(exc)
            if id_field is not None:
                reject(obj.get(id_field))
            continue
        yield record, origin


def parse_document(obj: dict, origin: Origin) -> Document:
    metadata = need(obj, "metadata", dict, origin, optional=True)
    credibility = need(obj, "credibility", float, origin, optional=True)
    return Document(
        doc_id=need(obj, "doc_id", str, origin),
        text=need(obj, "text", str, origin),
        title=need(obj, "title", str, origin, optional=True),
        source=need(obj, "source", str, origin, optional=True),
        credibility=None if credibility is None else float(credibility),
        metadata=metadata,
    )


def parse_evidence(value: object, origin: Origin) -> tuple[tuple[Span, ...], ...]:
    """[[{doc_id, start, end, grade?}, ...], ...] -> groups of alternative spans (de-duplicated)."""
    if not isinstance(value, list):
        raise origin.error(f"must be a list of groups, got {type(value).__name__}", "evidence")
    groups = []
    for g, group in enumerate(value):
        if not isinstance(group, list):
            raise origin.error(f"must be a list of spans, got {type(group).__name__}",
                               f"evidence[{g}]")
        spans: list[Span] = []
        for a, item in enumerate(group):
            where = f"evidence[{g}][{a}]"
            if not isinstance(item, dict):
                raise origin.error(f"must be an object, got {type(item).__name__}", where)
            sub = Origin(origin.path, origin.line, origin.field(where))
            grade = need(item, "grade", float, sub, optional=True, default=1.0)
            span = Span(need(item, "doc_id", str, sub), need(item, "start", int, sub),
                        need(item, "end", int, sub), float(grade))
            if span not in spans:
                spans.append(span)
        groups.append(tuple(spans))
    return tuple(groups)


QUESTION_FIELDS = {"qid", "question", "answers", "answerable", "evidence", "cluster", "type",
                   "tier", "split"}


def parse_question(obj: dict, origin: Origin) -> Question:
    answers = need(obj, "answers", list, origin)
    for i, a in enumerate(answers):
        if not isinstance(a, str):
            raise origin.error(f"must be a string, got {type(a).__name__}", f"answers[{i}]")
    if "evidence" not in obj:
        raise origin.error("missing required field", "evidence")
    return Question(
        qid=need(obj, "qid", str, origin),
        question=need(obj, "question", str, origin),
        answers=tuple(answers),
        answerable=need(obj, "answerable", bool, origin),
        evidence=parse_evidence(obj["evidence"], origin),
        cluster=need(obj, "cluster", str, origin, optional=True),
        type=need(obj, "type", str, origin, optional=True),
        tier=need(obj, "tier", str, origin, optional=True),
        split=need(obj, "split", str, origin, optional=True),
        columns=scalar_columns(obj, QUESTION_FIELDS),
    )


def load_jsonl(folder: Path) -> tuple[Iterator[tuple[Document, Origin]],
                                      Iterator[tuple[Question, Origin]]]:
    """Lazy (record, origin) streams of a native folder, so checks run in file order."""
    corpus = find_file(folder, "corpus")
    questions = find_file(folder, "questions")
    if corpus is None or questions is None:
        missing = "corpus.jsonl" if corpus is None else "questions.jsonl"
        raise InputError(f"missing {missing} (or {missing}.gz)", path=str(folder))
    docs = parsed(read_jsonl(corpus), parse_document, "doc_id")
    qs = parsed(read_jsonl(questions), parse_question)
    return docs, qs
