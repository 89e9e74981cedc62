"""Loader for a BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv.

Doc-level qrels become whole-document spans carrying their grade. All relevant documents
of a query are alternatives of ONE evidence group (any one of them answers it). Queries
judged in the split but with no positive qrel are unanswerable; queries not judged in
the split are left out. BEIR has no reference answers, so `answers` is empty.
"""

from __future__ import annotations

from pathlib import Path

from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Document, Question, Span
from ablate.components.data.jsonl import find_file, parsed, read_jsonl
from ablate.components.data.validate import Origin, need, rejected, report


def _read_qrels(path: Path) -> dict[str, list[tuple[str, int, Origin]]]:
    """query-id -> [(corpus-id, score, origin)] in file order; a header line is allowed."""
    out: dict[str, list[tuple[str, int, Origin]]] = {}
    try:
        lines = path.read_bytes().split(b"\n")
    except OSError as exc:
        raise InputError(f"cannot read file: {exc}", path=str(path)) from None
    for lineno, raw in enumerate(lines, start=1):
        origin = Origin(str(path), lineno)
        try:
            text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8").strip()
        except UnicodeDecodeError as exc:
            report(origin.error(f"undecodable bytes (not UTF-8) at byte {exc.start}"))
            continue
        if not text:
            continue
        cols = text.split("\t")
        if lineno == 1 and cols[0].lower() in ("query-id", "query_id", "qid"):
            continue
        if len(cols) != 3:
            report(origin.error(f"expected 3 tab-separated columns, got {len(cols)}"))
            continue
        qid, did, score = cols
        try:
            grade = int(score)
        except ValueError:
            report(origin.error(f"must be an integer, got {score!r}", "score"))
            continue
        out.setdefault(qid, []).append((did, grade, origin))
    return out


def _document(obj: dict, origin: Origin) -> Document:
    return Document(doc_id=need(obj, "_id", str, origin), text=need(obj, "text", str, origin),
                    title=need(obj, "title", str, origin, optional=True) or None,
                    metadata=need(obj, "metadata", dict, origin, optional=True))


def _query(obj: dict, origin: Origin) -> tuple[str, str]:
    return need(obj, "_id", str, origin), need(obj, "text", str, origin)


def load_beir(folder: Path, split: str = "test"
              ) -> tuple[list[tuple[Document, Origin]], list[tuple[Question, Origin]]]:
    """Parse a BEIR folder into (document, origin) and (question, origin) lists."""
    corpus = find_file(folder, "corpus")
    queries = find_file(folder, "queries")
    qrels_path = folder / "qrels" / f"{split}.tsv"
    if corpus is None:
        raise InputError("missing corpus.jsonl", path=str(folder))
    if queries is None:
        raise InputError("missing queries.jsonl", path=str(folder))
    if not qrels_path.is_file():
        raise InputError(f"missing qrels/{split}.tsv (beir split '{split}')", path=str(folder))
    docs: list[tuple[Document, Origin]] = []
    lengths: dict[str, int] = {}
    for doc, origin in parsed(read_jsonl(corpus), _document, "_id"):
        docs.append((doc, origin))
        lengths.setdefault(doc.doc_id, len(doc.text))
    qrels = _read_qrels(qrels_path)
    questions: list[tuple[Question, Origin]] = []
    skip = rejected()
    bad_queries: set[str] = set()  # a query that failed is said once, not again by its qrels

    def query(obj: dict, origin: Origin) -> tuple[str, str]:
        try:
            return _query(obj, origin)
        except InputError:
            if isinstance(obj.get("_id"), str):
                bad_queries.add(obj["_id"])
            raise
    for (qid, text), origin in parsed(read_jsonl(queries), query):
        judged = qrels.pop(qid, None)
        if judged is None:
            continue
        grades: dict[str, int] = {}
        for did, grade, qorigin in judged:
            if did in skip:
                continue
            if did not in lengths:
                report(qorigin.error(f"unknown document '{did}'", "corpus-id"))
                continue
            if grade > 0:
                grades[did] = max(grade, grades.get(did, 0))
        spans = [Span(did, 0, lengths[did], float(g)) for did, g in grades.items()]
        spans.sort(key=lambda s: (-s.grade, s.doc_id))
        questions.append((Question(qid=qid, question=text, answers=(), answerable=bool(spans),
                                   evidence=(tuple(spans),) if spans else ()), origin))
    for qid, judged in qrels.items():
        if qid not in bad_queries:
            report(judged[0][2].error(f"unknown query '{qid}'", "query-id"))
    return docs, questions
