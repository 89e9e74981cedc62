"""Relevant chunks per question by chunk size and label mode: the table of
docs/bring-your-own-data.md ("Document-level judgements").

On `tests/fixtures/squad_tiny.json` (three articles) and its first 20 answerable
questions, chunked with `token_window` without overlap (the experiment tokenizer), it
counts per question the chunks whose label reaches 0.5 (`metrics.label_threshold`'s
default) for three kinds of labels: the answer spans (`span` mode), whole-document spans
in `span` mode, and whole-document spans in `document` mode; and prints the mean over the
questions. Deterministic (no sampling, no timing).

    python benchmarks/label_modes.py            # the markdown table
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "squad_tiny.json"
SIZES = (64, 128, 256, 512)
THRESHOLD = 0.5
N_QUESTIONS = 20


def measure(path: Path = FIXTURE, sizes=SIZES, n_questions: int = N_QUESTIONS) -> dict:
    """{"tokens": (min, max) per document, "rows": [(size, span, doc_span, doc_document)]}."""
    from dataclasses import replace

    from ablate.components.contract.config import ChunkingConfig
    from ablate.components.contract.records import Span
    from ablate.components.data.squad import load_squad
    from ablate.components.text.chunking import chunk_documents
    from ablate.components.text.labels import label_chunks
    from ablate.components.text.tokenizer import get_tokenizer

    docs_o, questions_o = load_squad(path)
    docs = [d for d, _ in docs_o]
    questions = [q for q, _ in questions_o if q.answerable][:n_questions]
    text = {d.doc_id: d.text for d in docs}
    whole = [replace(q, evidence=tuple(
        (Span(doc_id, 0, len(text[doc_id])),)
        for doc_id in dict.fromkeys(s.doc_id for g in q.evidence for s in g)))
        for q in questions]
    tok = get_tokenizer()
    lengths = tok.count_batch([d.text for d in docs])
    rows = []
    for size in sizes:
        chunks = chunk_documents(docs, ChunkingConfig(method="token_window", size=size,
                                                      overlap=0), tok)

        def mean_relevant(qs, mode: str) -> float:
            labels = label_chunks(chunks, qs, mode)
            counts = [len({c for g in labels[q.qid] for c, v in g.items() if v >= THRESHOLD})
                      for q in qs]
            return sum(counts) / len(counts)
        rows.append((size, mean_relevant(questions, "span"), mean_relevant(whole, "span"),
                     mean_relevant(whole, "document")))
    return {"documents": len(docs), "questions": len(questions),
            "tokens": (min(lengths), max(lengths)),
            "rows": rows}


def _fmt(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))


def markdown(result: dict) -> str:
    lines = ["| chunk size | answer spans (`span`) | whole-document spans, `span` mode "
             "| whole-document spans, `document` mode |", "|---|---|---|---|"]
    lines += [f"| {s} | {_fmt(a)} | {_fmt(b)} | {_fmt(c)} |" for s, a, b, c in result["rows"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.parse_args(argv)
    result = measure()
    tokens = result["tokens"]
    print(f"{result['documents']} documents ({tokens[0]} to {tokens[1]} tokens), first {result['questions']} answerable questions, token_window, overlap 0, "
          f"threshold {THRESHOLD}: mean relevant chunks per question")
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
