"""NQ-like records -> ablate's native JSONL.  python convert_nq_like.py IN.jsonl OUT_FOLDER

Input: one JSON object per line, {"example_id", "question_text", "document_title",
"document_text", "annotations": [{"long_answer": {"start_byte", "end_byte"},
"short_answers": [{"start_byte", "end_byte"}, ...]}, ...]}, one annotation per annotator;
offsets are UTF-8 byte offsets into document_text, end exclusive; -1 means no long answer.
"""

import json
import sys
from pathlib import Path


def chars(raw: bytes, byte_offset: int) -> int:
    """A UTF-8 byte offset as a Python str offset (code points, what ablate expects)."""
    return len(raw[:byte_offset].decode("utf-8"))


def convert(src: Path, out: Path) -> None:
    docs: dict[str, str] = {}
    questions = []
    for line in src.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        doc_id, text = rec["document_title"], rec["document_text"]
        if docs.setdefault(doc_id, text) != text:  # one page, one document: no duplicates
            raise ValueError(f"{rec['example_id']}: another text for '{doc_id}'")
        raw = text.encode("utf-8")
        span = lambda b: (chars(raw, b["start_byte"]), chars(raw, b["end_byte"]))  # noqa: E731
        short = {span(s) for a in rec["annotations"] for s in a["short_answers"]}
        long = {span(a["long_answer"]) for a in rec["annotations"]
                if a["long_answer"]["start_byte"] >= 0}
        group = sorted(short or long)  # every annotator's span: alternatives of ONE group
        questions.append({
            "qid": rec["example_id"], "question": rec["question_text"],
            "answers": sorted({text[s:e] for s, e in short}), "answerable": bool(group),
            "evidence": [[{"doc_id": doc_id, "start": s, "end": e} for s, e in group]] if group else [],
            "cluster": doc_id})
    out.mkdir(parents=True, exist_ok=True)
    rows = {"corpus": [{"doc_id": d, "title": d, "text": t} for d, t in docs.items()],
            "questions": questions}
    for name, records in rows.items():
        with open(out / f"{name}.jsonl", "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


if __name__ == "__main__":
    convert(Path(sys.argv[1]), Path(sys.argv[2]))
