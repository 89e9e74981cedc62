"""The questions and final contexts a sweep folder keeps for its drill-down
(flows/outputs/evidence.py writes them): read back, with the lookups the drill-down and
`ablate explain` need. Optional: an older folder has neither file."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from ablate.components.contract.records import Passage  # one document range, as packed
from ablate.components.runtime.sweep_files import SweepFolder

QUESTIONS_FILE = "questions.parquet"
CONTEXTS_FILE = "contexts.parquet"
DOCUMENTS_FILE = "documents.parquet"  # doc_id, sha256 of each document (what `ablate diff` compares)


@dataclass(frozen=True)
class GoldQuestion:
    qid: str
    question: str
    answers: tuple[str, ...]
    evidence: tuple[tuple[Passage, ...], ...]  # groups of alternative spans

    def spans(self) -> list[Passage]:
        return [s for group in self.evidence for s in group]


@dataclass(frozen=True)
class Evidence:
    """Questions by qid, and final contexts by (assemble key, qid)."""

    questions: dict[str, GoldQuestion]
    contexts: dict[tuple[str, str], list[Passage]] = field(default_factory=dict)
    context_keys: frozenset[str] = frozenset()

    def context(self, key: str | None, qid: str) -> list[Passage] | None:
        """A final context's passages; None when the variant assembles none or it was not kept."""
        if key is None or key not in self.context_keys:
            return None
        return self.contexts.get((key, qid), [])


def load_evidence(folder: Path | SweepFolder) -> Evidence | None:
    """The folder's saved questions and contexts; None when it has no questions file (a
    damaged one: InputError, SweepFolder)."""
    files = folder if isinstance(folder, SweepFolder) else SweepFolder(folder)
    saved = files.optional_parquet(QUESTIONS_FILE)
    if saved is None:
        return None
    questions = {}
    for r in saved.iter_rows(named=True):
        groups = tuple(tuple(Passage(str(d), int(s), int(e), str(t)) for d, s, e, t in g)
                       for g in json.loads(r["evidence"] or "[]"))
        questions[r["qid"]] = GoldQuestion(r["qid"], r["question"] or "",
                                           tuple(r["answers"] or ()), groups)
    contexts: dict[tuple[str, str], list[Passage]] = {}
    keys: set[str] = set()
    frame = files.optional_parquet(CONTEXTS_FILE)
    if frame is not None:
        frame = frame.with_columns(
            pl.col("context_key", "doc_id", "text").cast(pl.Utf8)).sort("context_key", "qid", "rank")
        keys = set(frame["context_key"].unique().to_list())
        for key, qid, doc_id, start, end, text in frame.select(
                "context_key", "qid", "doc_id", "start", "end", "text").iter_rows():
            contexts.setdefault((key, qid), []).append(Passage(doc_id, start, end, text))
    return Evidence(questions, contexts, frozenset(keys))


def context_key(variant: dict[str, Any]) -> str | None:
    """A variant record's assemble stage key (variants.json), None without one."""
    return (variant.get("stage_keys") or {}).get("assemble")
