"""What the report's drill-down and `ablate explain` show of each question, saved in the
sweep folder so they read the folder alone (no cache, no data set, no recompute):

- questions.parquet: per question its text, gold answers and gold evidence spans (each
  span's document range and text, grouped as in the data);
- contexts.parquet: per context (the assemble stage key variants share) and question, the
  final context's passages in prompt order, each a document range and its text (text
  stored as a categorical: variants of one chunking share most passages, so the file
  holds each passage's text about once);
- documents.parquet: every document of the data set, its id and the sha256 (16 hex) of
  its record, so `ablate diff` names the documents added, removed and edited between two
  runs (the manifest's data fingerprint says only that something changed).

All are small next to per_query.parquet's metric columns; a folder without them (an older
sweep) still gets its report, with a drill-down that says they are missing."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from ablate.components.data.fingerprint import document_digests
from ablate.components.report.evidence import CONTEXTS_FILE, DOCUMENTS_FILE, QUESTIONS_FILE
from ablate.flows.run.context import RunContext

__all__ = ["write_evidence", "QUESTIONS_FILE", "CONTEXTS_FILE", "DOCUMENTS_FILE"]


def questions_frame(ctx: RunContext) -> pl.DataFrame:
    docs = ctx.dataset.doc_by_id()

    def text(doc_id: str, start: int, end: int) -> str:
        doc = docs.get(doc_id)
        return "" if doc is None else doc.text[start:end]
    rows = [{"qid": q.qid, "question": q.question, "answers": list(q.answers),
             "evidence": json.dumps([[[s.doc_id, s.start, s.end, text(s.doc_id, s.start, s.end)]
                                      for s in group] for group in q.evidence], ensure_ascii=False)}
            for q in sorted(ctx.questions, key=lambda q: q.qid)]
    return pl.DataFrame(rows, schema={"qid": pl.Utf8, "question": pl.Utf8,
                                      "answers": pl.List(pl.Utf8), "evidence": pl.Utf8})


def contexts_frame(ctx: RunContext) -> pl.DataFrame:
    """One row per passage of every distinct final context (by assemble key)."""
    docs = ctx.dataset.doc_by_id()
    keys = sorted({ctx.plan.by_variant[v.name]["assemble"] for v in ctx.variants
                   if "assemble" in ctx.plan.by_variant[v.name]})
    cols: dict[str, list] = {"context_key": [], "qid": [], "rank": [], "doc_id": [],
                             "start": [], "end": [], "text": []}
    for key in keys:
        frame = ctx.store.read("assemble", key).select("qid", "passages")
        for qid, passages in frame.iter_rows():
            for rank, (doc_id, start, end) in enumerate(json.loads(passages)):
                doc = docs.get(doc_id)
                cols["context_key"].append(key)
                cols["qid"].append(qid)
                cols["rank"].append(rank)
                cols["doc_id"].append(doc_id)
                cols["start"].append(start)
                cols["end"].append(end)
                cols["text"].append("" if doc is None else doc.text[start:end])
    return pl.DataFrame(cols, schema={"context_key": pl.Categorical, "qid": pl.Utf8,
                                      "rank": pl.Int32, "doc_id": pl.Categorical,
                                      "start": pl.Int64, "end": pl.Int64, "text": pl.Categorical})


def documents_frame(ctx: RunContext) -> pl.DataFrame:
    """Each document of the data set: its id and the digest of its record
    (components/data/fingerprint.document_digests)."""
    digests = document_digests(ctx.dataset.documents)
    return pl.DataFrame({"doc_id": list(digests), "sha256": list(digests.values())},
                        schema={"doc_id": pl.Utf8, "sha256": pl.Utf8})


def write_evidence(ctx: RunContext, folder: Path) -> None:
    """questions.parquet, contexts.parquet and documents.parquet into `folder` (the
    sweep's temporary one)."""
    questions_frame(ctx).write_parquet(Path(folder) / QUESTIONS_FILE, statistics=False)
    contexts_frame(ctx).write_parquet(Path(folder) / CONTEXTS_FILE, statistics=False)
    documents_frame(ctx).write_parquet(Path(folder) / DOCUMENTS_FILE, statistics=False)
