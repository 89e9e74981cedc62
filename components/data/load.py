"""load_dataset: detect the format, parse, validate and fingerprint a data set.

Validation runs before any compute and stops at the first problem with one InputError
naming file, line and field; within ablate.components.data.validate.collecting() it goes
on and records every problem (`ablate validate`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ablate.components.contract.errors import InputError
from ablate.components.contract.records import Dataset, Document, Question
from ablate.components.data.beir import load_beir
from ablate.components.data.fingerprint import fingerprint
from ablate.components.data.jsonl import find_file, load_jsonl
from ablate.components.data.squad import load_squad
from ablate.components.data.text_encoding import codec_name
from ablate.components.data.trec import find_trec_files, load_trec
from ablate.components.data.validate import Origin, check_documents, check_questions, problems

FORMATS = ("auto", "jsonl", "squad", "beir", "trec")


def detect_format(path: Path) -> str:
    """jsonl (corpus + questions), beir (corpus + queries + qrels/) or squad (a .json file)."""
    if path.is_file():
        if path.suffix.lower() == ".json":
            return "squad"
        raise InputError("a file data set must be a SQuAD .json file; a folder holds "
                         "corpus.jsonl + questions.jsonl (native) or a BEIR layout",
                         path=str(path))
    if path.is_dir():
        if find_file(path, "corpus") and find_file(path, "questions"):
            return "jsonl"
        if find_file(path, "corpus") and find_file(path, "queries") and (path / "qrels").is_dir():
            return "beir"
        if find_trec_files(path) is not None:
            return "trec"
        raise InputError("folder holds neither corpus.jsonl + questions.jsonl, a BEIR "
                         "layout (corpus.jsonl, queries.jsonl, qrels/) nor a TREC one "
                         "(topics*, qrels*, corpus/)", path=str(path))
    raise InputError("no such file or folder", path=str(path))


def load_dataset(path: str | Path, format: str = "auto", beir_split: str = "test",
                 encoding: str = "utf-8") -> Dataset:
    """Load and validate a data set; raises InputError on the first bad record (while
    collecting: records every bad record and returns the rest). `encoding`: of a TREC
    folder's files (the other formats are UTF-8 JSON)."""
    path = Path(path)
    if format not in FORMATS:
        raise InputError(f"unknown data format '{format}' (known: {', '.join(FORMATS)})",
                         field="format")
    try:
        encoding = codec_name(encoding)
    except ValueError as exc:
        raise InputError(str(exc), field="encoding") from None
    if not path.exists():
        raise InputError("no such file or folder", path=str(path))
    fmt = detect_format(path) if format == "auto" else format
    if encoding != "utf-8" and fmt != "trec":
        raise InputError(f"an encoding other than UTF-8 is for TREC data only; {fmt} files "
                         "are UTF-8", path=str(path), field="encoding")
    doc_stream: Iterable[tuple[Document, Origin]]
    q_stream: Iterable[tuple[Question, Origin]]
    if fmt == "jsonl":
        if not path.is_dir():
            raise InputError("the jsonl format needs a folder", path=str(path))
        doc_stream, q_stream = load_jsonl(path)
    elif fmt == "squad":
        if not path.is_file():
            raise InputError("the squad format needs a .json file", path=str(path))
        doc_stream, q_stream = load_squad(path)
    elif fmt == "trec":
        if not path.is_dir():
            raise InputError("the trec format needs a folder", path=str(path))
        doc_stream, q_stream = load_trec(path, encoding)
    else:
        if not path.is_dir():
            raise InputError("the beir format needs a folder", path=str(path))
        doc_stream, q_stream = load_beir(path, beir_split)
    before = problems()  # (a BEIR folder's queries and qrels are read before its documents)
    documents = check_documents(doc_stream)
    if not documents and problems() == before:  # (none left after their problems: said)
        raise InputError("the corpus holds no documents", path=str(_corpus_file(path, fmt)))
    questions = check_questions(q_stream, documents)
    source = f"{fmt}:{path}" + (f"#{beir_split}" if fmt == "beir" else "")
    return Dataset(documents=tuple(documents), questions=tuple(questions),
                   fingerprint=fingerprint(documents, questions), source=source)


def _corpus_file(path: Path, fmt: str) -> Path:
    """The file the documents come from, for error messages."""
    if fmt == "squad":
        return path
    if fmt == "trec":
        trec_files = find_trec_files(path)
        return trec_files[0] if trec_files else path / "corpus"
    found = find_file(path, "corpus")
    return found if found is not None else path / "corpus.jsonl"
