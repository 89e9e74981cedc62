"""Multi-hop QA (HotpotQA, 2WikiMultiHopQA, MuSiQue) -> ablate's native JSONL.

    python convert_multihop.py IN.json OUT_FOLDER [--limit N]

Input: a JSON list (or JSONL) of records in either shape:

- HotpotQA / 2WikiMultiHopQA (distractor setting): {"_id", "question", "answer", "type",
  "level"?, "context": [[title, [sentence, ...]], ...], "supporting_facts": [[title,
  sentence index], ...]};
- MuSiQue: {"id", "question", "answer", "paragraphs": [{"title", "paragraph_text",
  "is_supporting"}, ...], "question_decomposition": [...]} (type: "<n>hop").

Output: one document per paragraph title (doc_id and title the title; text the title on
its first line, then the paragraph), shared by every question that has it; a second,
different text under one title is an error. Per question: every supporting paragraph is
one evidence group (a question is fully supported when every gold paragraph is
retrieved), its span the paragraph's supporting sentences (the whole paragraph for
MuSiQue); `type` (bridge, comparison, 2hop, ...) and `level` (easy, medium, hard) are
question columns, so the report can slice by them (`report.slices: [type, level]`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _records(src: Path) -> list[dict]:
    text = src.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _paragraphs(rec: dict) -> list[tuple[str, list[str], set[int]]]:
    """(title, sentences, supporting sentence indices) of each paragraph of a record."""
    if "context" in rec:  # HotpotQA / 2Wiki
        support: dict[str, set[int]] = {}
        for title, idx in rec["supporting_facts"]:
            support.setdefault(title, set()).add(int(idx))
        return [(t, list(s), support.get(t, set())) for t, s in rec["context"]]
    return [(p["title"], [p["paragraph_text"]], {0} if p["is_supporting"] else set())
            for p in rec["paragraphs"]]


def _document(title: str, sentences: list[str]) -> tuple[str, list[tuple[int, int]]]:
    """The document text (title line, then the sentences joined as given) and each
    sentence's (start, end) in it."""
    text, spans = title + "\n", []
    for s in sentences:
        spans.append((len(text), len(text) + len(s)))
        text += s
    return text, spans


def convert_record(rec: dict, docs: dict[str, str]) -> dict:
    qid = str(rec.get("_id", rec.get("id")))
    evidence = []
    for title, sentences, support in _paragraphs(rec):
        text, spans = _document(title, sentences)
        if docs.setdefault(title, text) != text:
            raise ValueError(f"{qid}: another text for the paragraph '{title}'")
        chosen = [spans[i] for i in sorted(support) if i < len(spans)]
        if chosen:
            start, end = chosen[0][0], chosen[-1][1]
            evidence.append([{"doc_id": title, "start": start, "end": end}])
    kind = rec.get("type") or f"{len(rec.get('question_decomposition', [])) or 2}hop"
    out = {"qid": qid, "question": rec["question"], "answers": [rec["answer"]],
           "answerable": bool(evidence), "evidence": evidence, "type": kind}
    if rec.get("level"):
        out["level"] = rec["level"]
    return out


def convert(src: Path, out: Path, limit: int | None = None) -> tuple[int, int]:
    """Write out/corpus.jsonl and out/questions.jsonl; (documents, questions)."""
    docs: dict[str, str] = {}
    questions = [convert_record(r, docs) for r in _records(src)[:limit]]
    out.mkdir(parents=True, exist_ok=True)
    rows = {"corpus": [{"doc_id": d, "title": d, "text": t} for d, t in docs.items()],
            "questions": questions}
    for name, records in rows.items():
        with open(out / f"{name}.jsonl", "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    return len(docs), len(questions)


if __name__ == "__main__":
    args = sys.argv[1:]
    n = int(args[args.index("--limit") + 1]) if "--limit" in args else None
    print("%d documents, %d questions" % convert(Path(args[0]), Path(args[1]), n))
