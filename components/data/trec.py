"""TREC test collections: documents, topics and qrels in the formats Anserini reads.

- Documents: Anserini's `JsonCollection` (`{"id", "contents"}` per line, one file or a
  folder of `.json`/`.jsonl` files, read in name order) or its `HtmlCollection` (a folder of
  `.html` files, the id the file name without extension, the text without the tags).
- Topics: TREC's `<top>` format (`<num> Number: 51`, the `<title>` text), the CACM
  variant (`<DOC> <DOCNO> 1 </DOCNO>` then the text up to `</DOC>`), or `qid<TAB>text`.
- Qrels: `qid iteration docid relevance` per line, graded (a relevance of 0 or less is
  judged non-relevant).

Every reader raises an InputError naming the file, the line and what is wrong; each
reads its files in `encoding` (UTF-8 unless told: old collections are often Latin-1), a
byte that is not of it an error naming the line (components/data/text_encoding.py).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ablate.components.contract.errors import InputError
from ablate.components.data.text_encoding import read_lines, read_text

TOPIC_FORMATS = ("auto", "trec", "cacm", "tsv")
COLLECTION_FORMATS = ("auto", "json", "html")
_TAG = re.compile(r"<[A-Za-z/!?][^>]*>")  # a '<' followed by a space or '=' is text


@dataclass(frozen=True)
class TrecDoc:
    doc_id: str
    contents: str
    path: str = ""
    line: int | None = None


def _files(path: Path, suffixes: tuple[str, ...]) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise InputError("no such file or folder", path=str(path))
    found = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(suffixes))
    if not found:
        raise InputError(f"the folder holds no {'/'.join(suffixes)} files", path=str(path))
    return found


def read_json_collection(path: str | Path, encoding: str = "utf-8") -> Iterator[TrecDoc]:
    """Anserini's JsonCollection: one `{"id": ..., "contents": ...}` object per line."""
    for f in _files(Path(path), (".json", ".jsonl")):
        for n, line in read_lines(f, encoding):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"not a JSON object: {exc.msg}", path=str(f), line=n) from None
            if not isinstance(rec, dict):
                raise InputError("not a JSON object", path=str(f), line=n)
            for key in ("id", "contents"):
                if not isinstance(rec.get(key), str):
                    raise InputError("missing or not a string", path=str(f), line=n, field=key)
            if not rec["id"] or any(ch.isspace() for ch in rec["id"]):
                raise InputError("an id must be non-empty without white space",
                                 path=str(f), line=n, field="id")
            yield TrecDoc(rec["id"], rec["contents"], str(f), n)


def html_text(html: str) -> str:
    """The text of an HTML page: tags removed, the five common entities decoded."""
    text = _TAG.sub(" ", html)
    for ent, ch in (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&#39;", "'"), ("&amp;", "&")):
        text = text.replace(ent, ch)
    return text


def read_html_collection(path: str | Path, encoding: str = "utf-8") -> Iterator[TrecDoc]:
    """Anserini's HtmlCollection: one document per .html file, named by the file."""
    for f in _files(Path(path), (".html", ".htm")):
        yield TrecDoc(f.name.rsplit(".", 1)[0], html_text(read_text(f, encoding)), str(f))


def read_collection(path: str | Path, format: str = "auto", encoding: str = "utf-8") -> list[TrecDoc]:
    """The documents of a collection (`json`, `html`, or `auto`: html when the folder
    holds .html files and no .json/.jsonl), ids unique."""
    p = Path(path)
    if format == "auto":
        htmls = p.is_dir() and any(p.rglob("*.html"))
        jsons = p.is_file() or any(p.rglob("*.json")) or any(p.rglob("*.jsonl"))
        format = "html" if htmls and not jsons else "json"
    if format not in COLLECTION_FORMATS:
        raise InputError(f"unknown collection format '{format}' (known: {', '.join(COLLECTION_FORMATS)})",
                         field="collection.format")
    docs = list(read_json_collection(p, encoding) if format == "json"
                else read_html_collection(p, encoding))
    seen: set[str] = set()
    for d in docs:
        if d.doc_id in seen:
            raise InputError(f"document id '{d.doc_id}' repeats", path=d.path or str(p),
                             line=d.line, field="id")
        seen.add(d.doc_id)
    if not docs:
        raise InputError("the collection holds no documents", path=str(p))
    return docs


def read_topics(path: str | Path, format: str = "auto", encoding: str = "utf-8") -> dict[str, str]:
    """{qid: query text} of a topics file."""
    p = Path(path)
    if not p.is_file():
        raise InputError("no such file", path=str(p))
    text = read_text(p, encoding)
    if format == "auto":
        format = ("trec" if re.search(r"<top>", text, re.I) else
                  "cacm" if re.search(r"<DOCNO>", text) else "tsv")
    if format == "trec":
        return _trec_topics(text, str(p))
    if format == "cacm":
        return _cacm_topics(text, str(p))
    if format == "tsv":
        return _tsv_topics(text, str(p))
    raise InputError(f"unknown topics format '{format}' (known: {', '.join(TOPIC_FORMATS)})",
                     field="topics.format")


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _put(out: dict[str, str], qid: str, body: str, path: str, line: int) -> None:
    if not qid or any(ch.isspace() for ch in qid):
        raise InputError("a topic id must be non-empty without white space", path=path, line=line)
    if qid in out:
        raise InputError(f"topic '{qid}' repeats", path=path, line=line)
    out[qid] = body


def _trec_topics(text: str, path: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in re.finditer(r"<top>(.*?)(?:</top>|\Z)", text, re.S | re.I):
        line = _line_of(text, m.start())
        if not m.group(0).lower().endswith("</top>"):
            raise InputError("<top> without </top>", path=path, line=line)
        block = m.group(1)
        num = re.search(r"<num>\s*(?:Number:)?\s*(\S+)", block, re.I)
        if num is None:
            raise InputError("topic without <num>", path=path, line=line)
        title = re.search(r"<title>\s*(?:Topic:)?(.*?)(?=<[a-z/]|\Z)", block, re.S | re.I)
        if title is None or not title.group(1).strip():
            raise InputError(f"topic '{num.group(1)}' has no <title> text", path=path, line=line)
        _put(out, num.group(1), " ".join(title.group(1).split()), path, line)
    if not out:
        raise InputError("no <top> topics found", path=path)
    return out


def _cacm_topics(text: str, path: str) -> dict[str, str]:
    """The text after the <DOCNO> line up to </DOC> (as Anserini's CacmTopicReader);
    numeric ids are written without leading zeros, as it parses them to integers."""
    out: dict[str, str] = {}
    for m in re.finditer(r"<DOC>(.*?)(?:</DOC>|\Z)", text, re.S):
        line = _line_of(text, m.start())
        if not m.group(0).endswith("</DOC>"):
            raise InputError("<DOC> without </DOC>", path=path, line=line)
        num = re.search(r"<DOCNO>\s*(.*?)\s*</DOCNO>[^\n]*\n?", m.group(1), re.S)
        if num is None:
            raise InputError("topic without <DOCNO> ... </DOCNO>", path=path, line=line)
        qid = str(int(num.group(1))) if num.group(1).isdigit() else num.group(1)
        _put(out, qid, m.group(1)[num.end():], path, line)
    if not out:
        raise InputError("no <DOC> topics found", path=path)
    return out


def _tsv_topics(text: str, path: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if "\t" not in line:
            raise InputError("expected 'qid<TAB>text'", path=path, line=n)
        qid, body = line.split("\t", 1)
        _put(out, qid.strip(), body, path, n)
    if not out:
        raise InputError("no topics found", path=path)
    return out


def read_qrels(path: str | Path, encoding: str = "utf-8") -> dict[str, dict[str, int]]:
    """{qid: {docid: relevance}} of a TREC qrels file (graded; every judgment kept)."""
    p = Path(path)
    if not p.is_file():
        raise InputError("no such file", path=str(p))
    out: dict[str, dict[str, int]] = {}
    for n, line in read_lines(p, encoding):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 4:
            raise InputError(f"expected 'qid iteration docid relevance', got {len(parts)} "
                             "columns", path=str(p), line=n)
        qid, _, doc, rel = parts
        try:
            grade = int(rel)
        except ValueError:
            raise InputError(f"relevance '{rel}' is not an integer", path=str(p), line=n,
                             field="relevance") from None
        judged = out.setdefault(qid, {})
        if doc in judged and judged[doc] != grade:
            raise InputError(f"document '{doc}' is judged twice for topic '{qid}' "
                             "with different relevance", path=str(p), line=n)
        judged[doc] = grade
    if not out:
        raise InputError("the qrels file holds no judgments", path=str(p))
    return out


# ---- a TREC test collection as an ablate data set ------------------------------------------

def find_trec_files(folder: Path) -> tuple[Path, Path, Path] | None:
    """(collection, topics, qrels) of a TREC folder: a `topics*` file, a `qrels*` file
    and the documents in `corpus/` (or the one .json/.jsonl file beside them); None when
    the folder is not laid out so."""
    topics = sorted(p for p in folder.glob("topics*") if p.is_file())
    qrels = sorted(p for p in folder.glob("qrels*") if p.is_file())
    if len(topics) != 1 or len(qrels) != 1:
        return None
    if (folder / "corpus").is_dir():
        return folder / "corpus", topics[0], qrels[0]
    files = sorted(p for p in folder.iterdir() if p.suffix in (".json", ".jsonl"))
    return (files[0], topics[0], qrels[0]) if len(files) == 1 else None


def load_trec(folder: Path, encoding: str = "utf-8"):
    """A TREC folder as (document, origin) and (question, origin) lists, as BEIR's: each
    judged topic is a question whose relevant documents (relevance > 0) are whole-document
    spans carrying their grade, alternatives of one evidence group; a judged topic without
    relevant documents in the collection is unanswerable; topics without judgments are
    left out. Every file is read in `encoding`."""
    from ablate.components.contract.records import Document, Question, Span
    from ablate.components.data.validate import Origin
    found = find_trec_files(folder)
    if found is None:
        raise InputError("a TREC folder holds one topics* file, one qrels* file and the "
                         "documents in corpus/ (or one .json/.jsonl file)", path=str(folder))
    coll, topics_path, qrels_path = found
    docs = [(Document(doc_id=d.doc_id, text=d.contents), Origin(d.path, d.line))
            for d in read_collection(coll, encoding=encoding)]
    lengths = {d.doc_id: len(d.text) for d, _ in docs}
    topics = read_topics(topics_path, encoding=encoding)
    qrels = read_qrels(qrels_path, encoding)
    questions = []
    for qid, judged in qrels.items():
        if qid not in topics:
            raise InputError(f"topic '{qid}' is judged but not in {topics_path.name}",
                             path=str(qrels_path))
        # judgments of documents the collection lacks are left out (CACM's qrels name 55
        # such ids, e.g. CACM-756 for CACM-0756; trec_eval counts them as relevant and
        # never retrieved, which `ablate reproduce` follows, a sweep's metrics do not)
        spans = sorted((Span(d, 0, lengths[d], float(g)) for d, g in judged.items()
                        if g > 0 and d in lengths),
                       key=lambda s: (-s.grade, s.doc_id))
        text = " ".join(topics[qid].split())
        questions.append((Question(qid=qid, question=text, answers=(), answerable=bool(spans),
                                   evidence=(tuple(spans),) if spans else ()),
                          Origin(str(topics_path))))
    return docs, questions
