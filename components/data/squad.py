"""Loader for SQuAD v2 JSON: each article is one document, annotators' answers one group.

Paragraphs of an article are joined with "\\n\\n" and answer offsets are shifted exactly;
every answer text must equal its document slice. `is_impossible` questions are
unanswerable (no evidence); `plausible_answers` are never evidence. Duplicate answer
spans among annotators are de-duplicated inside the group. cluster = doc_id, so the
questions of one article form a cluster for clustered statistics.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Document, Question, Span
from ablate.components.data import finite_json
from ablate.components.data.validate import Origin, need, report

JOINER = "\n\n"


def slug(title: str) -> str:
    """A filesystem- and TREC-safe id from an article title."""
    return re.sub(r"[^0-9a-z]+", "-", title.lower()).strip("-")


def read_json(path: Path) -> object:
    """json.load with InputError on undecodable bytes or invalid JSON (line numbers kept)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read file: {exc}", path=str(path)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(f"undecodable bytes (not UTF-8) at byte {exc.start}",
                         path=str(path), line=line) from None
    try:
        return finite_json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg} (column {exc.colno})",
                         path=str(path), line=exc.lineno) from None
    except finite_json.NonFinite as exc:
        raise InputError(str(exc), path=str(path), line=exc.line) from None


def _question(qa: dict, origin: Origin, context: str, base: int, doc_id: str) -> Question:
    qid = need(qa, "id", str, origin)
    text = need(qa, "question", str, origin)
    impossible = need(qa, "is_impossible", bool, origin, optional=True, default=False)
    answers = need(qa, "answers", list, origin)
    if impossible and answers:
        raise origin.error(f"unanswerable question '{qid}' has evidence (answers)", "answers")
    if not impossible and not answers:
        raise origin.error(f"answerable question '{qid}' has no answers", "answers")
    spans: list[Span] = []
    texts: list[str] = []
    for a, ans in enumerate(answers):
        where = f"answers[{a}]"
        if not isinstance(ans, dict):
            raise origin.error(f"must be an object, got {type(ans).__name__}", where)
        sub = Origin(origin.path, origin.line, origin.field(where))
        atext = need(ans, "text", str, sub)
        start = need(ans, "answer_start", int, sub)
        if not atext:
            raise sub.error("empty answer text", "text")
        if start < 0 or context[start:start + len(atext)] != atext:
            raise sub.error(f"answer text {atext[:40]!r} does not match the context at "
                            f"offset {start}", "answer_start")
        span = Span(doc_id, base + start, base + start + len(atext))
        if span not in spans:
            spans.append(span)
        if atext not in texts:
            texts.append(atext)
    return Question(qid=qid, question=text, answers=tuple(texts), answerable=not impossible,
                    evidence=(tuple(spans),) if spans else (), cluster=doc_id)


def load_squad(path: Path) -> tuple[list[tuple[Document, Origin]], list[tuple[Question, Origin]]]:
    """Parse a SQuAD v2 file into (document, origin) and (question, origin) lists."""
    root = read_json(path)
    top = Origin(str(path))
    if not isinstance(root, dict):
        raise top.error("the top level must be an object with a 'data' list")
    articles = need(root, "data", list, top)
    docs: list[tuple[Document, Origin]] = []
    questions: list[tuple[Question, Origin]] = []
    used: set[str] = set()
    for i, art in enumerate(articles):
        aorig = Origin(str(path), None, f"data[{i}]")
        if not isinstance(art, dict):  # each structural problem is reported (raised unless
            report(top.error("must be an object", f"data[{i}]"))  # collecting) and skipped
            continue
        title = need(art, "title", str, aorig, optional=True, default="")
        base_id = slug(title) or f"article-{i}"
        doc_id, n = base_id, 1
        while doc_id in used:  # distinct titles may share a slug: disambiguate by order
            n += 1
            doc_id = f"{base_id}-{n}"
        used.add(doc_id)
        contexts: list[str] = []
        offset = 0
        try:
            paragraphs = need(art, "paragraphs", list, aorig)
        except InputError as exc:
            report(exc)
            continue
        for j, par in enumerate(paragraphs):
            porig = Origin(str(path), None, aorig.field(f"paragraphs[{j}]"))
            if not isinstance(par, dict):
                report(porig.error("must be an object"))
                continue
            try:
                context = need(par, "context", str, porig)
                qas = need(par, "qas", list, porig)
            except InputError as exc:
                report(exc)
                continue
            base = offset + (len(JOINER) if contexts else 0)
            for k, qa in enumerate(qas):
                qorig = Origin(str(path), None, porig.field(f"qas[{k}]"))
                if not isinstance(qa, dict):
                    report(qorig.error("must be an object"))
                    continue
                try:
                    questions.append((_question(qa, qorig, context, base, doc_id), qorig))
                except InputError as exc:  # raised again unless collecting every problem
                    report(exc)
            contexts.append(context)
            offset = base + len(context)
        docs.append((Document(doc_id=doc_id, text=JOINER.join(contexts), title=title or None,
                              source=str(path.name)), aorig))
    return docs, questions
