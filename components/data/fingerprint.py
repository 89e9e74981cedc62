"""Content fingerprint of a data set: a SHA-256 over its canonical records.

Records are serialised as sorted-key JSON in id order, so the fingerprint changes with
any text, offset, answer or label and not with file layout, gzip or record order.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import fields, is_dataclass
from typing import Any, Sequence

from ablate.components.contract.records import Document, Question


def fingerprint(documents: Sequence[Document], questions: Sequence[Question]) -> str:
    """'sha256:<hex>' of the documents (by doc_id) and questions (by qid)."""
    h = hashlib.sha256()
    kinds: tuple[tuple[str, Sequence[Document | Question], str], ...] = (
        ("doc", documents, "doc_id"), ("q", questions, "qid"))
    for kind, records, key in kinds:
        for rec in sorted(records, key=lambda r: getattr(r, key)):
            line = json.dumps([kind, _plain(rec)], sort_keys=True, ensure_ascii=False,
                              separators=(",", ":"), default=str)
            h.update(line.encode("utf-8"))
            h.update(b"\n")
    return "sha256:" + h.hexdigest()


def document_digests(documents: Sequence[Document]) -> dict[str, str]:
    """{doc_id: sha256 (16 hex)} of each document's canonical record (the line the
    fingerprint hashes), in id order: what a sweep folder keeps (documents.parquet) so
    `ablate diff` names the documents added, removed and edited between two runs."""
    out = {}
    for doc in sorted(documents, key=lambda d: d.doc_id):
        line = json.dumps(_plain(doc), sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                          default=str)
        out[doc.doc_id] = hashlib.sha256(line.encode("utf-8")).hexdigest()[:16]
    return out


_FIELDS: dict[type, tuple[str, ...]] = {}
# fields added after fingerprints existed, left out when empty, so data without them keeps
# its fingerprint (and every stage key built on it)
OMITTED_WHEN_EMPTY = frozenset({"columns"})


def _plain(value: Any) -> Any:
    """What `dataclasses.asdict` makes of a record, as json.dumps writes it (a tuple as the
    list it becomes), without asdict's deep copy of every value (~1 s of a run's start on
    6k questions; tests/components/data/test_fingerprint_plain.py checks the same bytes)."""
    kind = type(value)
    if kind is str or value is None or kind is int or kind is float or kind is bool:
        return value
    names = _FIELDS.get(kind)
    if names is None and is_dataclass(value) and not isinstance(value, type):
        names = _FIELDS[kind] = tuple(f.name for f in fields(value))
    if names is not None:
        return {n: _plain(getattr(value, n)) for n in names
                if n not in OMITTED_WHEN_EMPTY or getattr(value, n)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
