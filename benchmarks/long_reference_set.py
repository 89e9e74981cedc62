"""A long-reference data set from the bundled SQuAD 2.0 dev half (issue 54.1), and an
experiment that runs on it: RAG (the extractive generator) against closed book.

Support data sets often give whole sentences (~50 words) as references, where SQuAD gives
a short span. This script writes such a set in the native JSONL format: the corpus is
SQuAD's paragraphs; every answerable question's reference is the whole sentence of its
paragraph that holds the first gold answer (its evidence stays the gold answer spans);
unanswerable questions are kept, so refusal is measured too.

    python benchmarks/long_reference_set.py OUT_FOLDER
    ablate run OUT_FOLDER/long-reference.yaml

The experiment: bm25, a 512-token context and the extractive generator as the baseline
(RAG), swept against `closed_book` (SmolLM2 from memory: the one model run, 40 questions)
and a stricter `generator.threshold`; key metrics answer/f1 and answer/content_f1.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SQUAD = ROOT / "experiments/data/squad2-dev-half/dev-v2.0.json"

EXPERIMENT = """\
# Written by benchmarks/long_reference_set.py: references are whole gold sentences.
name: long-reference
description: RAG (extractive) against closed book on SQuAD 2.0 questions whose references are whole sentences.
dataset: {{path: data, format: jsonl}}
tier: smoke
smoke_size: {n}
seed: 13
metrics:
  key: [final/recall_at_5, answer/f1, answer/content_f1]
baseline:
  chunking: {{method: token_window, size: 200, overlap: 32}}
  retrieval: {{paths: [bm25], depth: 50}}
  rerank: {{method: none}}
  context: {{budget: 512, policy: skip}}
  generator: {{name: extractive, threshold: 0.3}}
sweeps:
  - variable: generator.name
    values: [closed_book]
  - variable: generator.threshold
    values: [0.6]
"""


def build(out: Path, n: int) -> tuple[int, int]:
    """Write OUT/data/{corpus,questions}.jsonl and OUT/long-reference.yaml; (documents,
    questions) written."""
    from ablate.components.data.load import load_dataset
    from ablate.components.text.sentences import sentence_spans
    data = load_dataset(SQUAD, "squad")
    (out / "data").mkdir(parents=True, exist_ok=True)
    docs = data.doc_by_id()
    with open(out / "data/corpus.jsonl", "w", encoding="utf-8") as fh:
        for d in data.documents:
            fh.write(json.dumps({"doc_id": d.doc_id, "text": d.text, "title": d.title},
                                ensure_ascii=False) + "\n")
    with open(out / "data/questions.jsonl", "w", encoding="utf-8") as fh:
        for q in data.questions:
            answers: list[str] = []
            if q.answerable and q.evidence:
                span = q.evidence[0][0]
                text = docs[span.doc_id].text
                answers = [next(text[a:b] for a, b in sentence_spans(text, latin="capital")
                                if a <= span.start < b)]
            fh.write(json.dumps({
                "qid": q.qid, "question": q.question, "answers": answers,
                "answerable": q.answerable and bool(answers), "cluster": q.cluster,
                "evidence": [[{"doc_id": s.doc_id, "start": s.start, "end": s.end} for s in g]
                             for g in q.evidence] if answers else []},
                ensure_ascii=False) + "\n")
    (out / "long-reference.yaml").write_text(EXPERIMENT.format(n=n), encoding="utf-8")
    return len(data.documents), len(data.questions)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--n", type=int, default=40, help="questions in the experiment's smoke tier")
    args = ap.parse_args(argv)
    docs, questions = build(args.out, args.n)
    print(f"wrote {docs} documents, {questions} questions and long-reference.yaml to {args.out}")


if __name__ == "__main__":
    sys.exit(main())
