"""Content fingerprint of a data set: a SHA-256 over its canonical records.

Records are serialised as sorted-key JSON in id order, so the fingerprint changes with
any text, offset, answer or label and not with file layout, gzip or record order.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from typing import Sequence

from ablate.components.contract.records import Document, Question


def fingerprint(documents: Sequence[Document], questions: Sequence[Question]) -> str:
    """'sha256:<hex>' of the documents (by doc_id) and questions (by qid)."""
    h = hashlib.sha256()
    kinds: tuple[tuple[str, Sequence[Document | Question], str], ...] = (
        ("doc", documents, "doc_id"), ("q", questions, "qid"))
    for kind, records, key in kinds:
        for rec in sorted(records, key=lambda r: getattr(r, key)):
            line = json.dumps([kind, asdict(rec)], sort_keys=True, ensure_ascii=False,
                              separators=(",", ":"), default=str)
            h.update(line.encode("utf-8"))
            h.update(b"\n")
    return "sha256:" + h.hexdigest()
